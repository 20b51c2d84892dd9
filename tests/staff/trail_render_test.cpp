// staff/trail_render.h: the trail documents. Markdown is checked for its sections and its
// code blocks, JSON for its content, on the seeded history (a replied, an escalated and a
// staff-edited message) and on trails built by hand for the cases the seed lacks.
#include "staff/trail_render.h"

#include <catch2/catch.hpp>

#include "tests/store/store_fixture.h"
#include "tests/support/seed.h"

namespace dispatchd::test {
namespace {

store::Trail seeded_trail(std::int64_t id) {
  TempDir dir;
  auto db = migrated_db(dir);
  REQUIRE(seed_history(db, k_t0));
  auto trail = store::load_trail(db, id, 10);
  REQUIRE(trail);
  return std::move(*trail);
}

// The sections' headings, in order.
std::vector<std::string> headings(const std::string& markdown) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < markdown.size()) {
    const std::size_t end = markdown.find('\n', at);
    const std::string line = markdown.substr(at, end - at);
    if (line.starts_with("# ") || line.starts_with("## ")) out.push_back(line);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

const std::vector<std::string> k_sections = {"## Inbound message", "## Files",       "## Context given to the model",
                                             "## Attempts",        "## Tool calls",  "## Decision",
                                             "## Outbox",          "## Escalations", "## Staff actions",
                                             "## Audit events"};

std::vector<std::string> sections_after_title(const std::string& markdown) {
  auto all = headings(markdown);
  REQUIRE(!all.empty());
  return {all.begin() + 1, all.end()};
}

// The text of the first code block opened by exactly `fence` (its info string ignored).
std::string block_after(const std::string& markdown, const std::string& fence) {
  const std::size_t open = markdown.find("\n" + fence + "\n");
  REQUIRE(open != std::string::npos);
  const std::size_t start = open + fence.size() + 2;
  const std::size_t close = markdown.find("\n" + fence + "\n", start - 1);
  REQUIRE(close != std::string::npos);
  return markdown.substr(start, close + 1 - start);
}

store::TrailAttempt attempt(int n, store::Verdict verdict, const std::string& raw) {
  store::TrailAttempt a;
  a.row.attempt = n;
  a.row.provider = "openai";
  a.row.model = "m";
  a.row.verdict = verdict;
  a.row.raw_output = raw;
  a.row.errors = "[]";
  a.row.created_at = "2026-11-30T12:00:0" + std::to_string(n) + "Z";
  return a;
}

store::Trail hand_made() {
  store::Trail t;
  t.message = {7,
               "whatsapp",
               "wamid.7",
               "c",
               "15551234567",
               "2026-11-30T12:00:00Z",
               "Where is ORD-7?",
               store::InboxState::done,
               store::Outcome::replied};
  t.history_limit = 10;
  return t;
}

}  // namespace

TEST_CASE("code_fence: longer than any run of backticks inside, at least three", "[trail]") {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"", "```"},
      {"plain", "```"},
      {"a ` b", "```"},
      {"``", "```"},
      {"```json\n{}\n```", "````"},
      {"x ```` y ``` z", "`````"},
      {"`````", "``````"},
  };
  for (const auto& [text, fence] : table) {
    INFO(text);
    CHECK(staff::code_fence(text) == fence);
  }
}

TEST_CASE("trail Markdown: every section, in order, for a replied, an escalated and an edited message", "[trail]") {
  for (const std::int64_t id : {1, 3, 4}) {
    INFO("message " << id);
    const std::string md = staff::trail_markdown(seeded_trail(id));
    CHECK(md.starts_with("# Trail of message " + std::to_string(id) + "\n"));
    CHECK(sections_after_title(md) == k_sections);
    CHECK(md.find("The chain verifies across audit ids") != std::string::npos);
    CHECK(md.find("dispatchd does not store the prompt itself") != std::string::npos);
    CHECK(md.find("| # | At | Provider | Model | Verdict |") != std::string::npos);
  }
  const std::string replied = staff::trail_markdown(seeded_trail(1));
  CHECK(replied.find("| 1 | send\\_message | sent | dispatchd | 15551230001 | out.dispatchd-1-1 |") !=
        std::string::npos);
  CHECK(replied.find("Summary: replied; send_message sent to 15551230001 by dispatchd") != std::string::npos);
  const std::string escalated = staff::trail_markdown(seeded_trail(3));
  CHECK(escalated.find("### Escalation 2: contract_failed, open") != std::string::npos);
  CHECK(escalated.find("### Attempt 3: invalid") != std::string::npos);
  CHECK(escalated.find("\"code\":\"truncated\"") != std::string::npos);
  const std::string edited = staff::trail_markdown(seeded_trail(4));
  CHECK(edited.find("| 3 | send\\_message | sent | ana | 15551230001 | out.dispatchd-4-2 | 3 |") != std::string::npos);
  CHECK(edited.find("| ana | staff\\_claim |") != std::string::npos);
  CHECK(edited.find("| ana | staff\\_resolved | {\"escalation\":3,\"resolution\":\"edited\"} |") != std::string::npos);
  CHECK(edited.find("- Resolution: edited at") != std::string::npos);
}

TEST_CASE("trail Markdown: raw output with backticks keeps its own fences inside a longer one", "[trail]") {
  auto t = hand_made();
  const std::string fenced = "```json\n{\"action\":\"send_message\"}\n```";
  const std::string longer = "see ````` here";
  t.attempts = {attempt(1, store::Verdict::invalid, fenced), attempt(2, store::Verdict::invalid, longer)};
  const std::string md = staff::trail_markdown(t);
  CHECK(block_after(md, "````") == fenced + "\n");
  CHECK(block_after(md, "``````") == longer + "\n");
}

TEST_CASE("trail: an accepted answer followed by another attempt is a tool call whose answer is not stored",
          "[trail]") {
  auto t = hand_made();
  t.attempts = {attempt(1, store::Verdict::valid, R"({"action":"query_status","order":"ORD-7"})"),
                attempt(2, store::Verdict::valid, R"({"action":"send_message","content":"Shipped"})")};
  const std::string md = staff::trail_markdown(t);
  CHECK(md.find("### Attempt 1: valid (tool call)") != std::string::npos);
  CHECK(md.find("### Attempt 2: valid\n") != std::string::npos);
  CHECK(md.find("- attempt 1: answer not stored") != std::string::npos);
  const auto json = parse_json(staff::trail_json(t));
  CHECK(json["attempts"][0]["tool_call"].GetBool());
  CHECK_FALSE(json["attempts"][1]["tool_call"].GetBool());
  REQUIRE(json["tool_calls"].Size() == 1);
  CHECK(json["tool_calls"][0]["attempt"].GetInt() == 1);
  CHECK(std::string(json["tool_calls"][0]["call"].GetString()).find("query_status") != std::string::npos);
  CHECK(json["tool_calls"][0]["answer"].IsNull());
}

TEST_CASE("trail: an outbox row with its body and the channel's delivery reports", "[trail]") {
  auto t = hand_made();
  store::TrailAction a;
  a.row = {11,
           7,
           "send_message",
           R"({"content":"It ships today"})",
           "15551234567",
           "It ships today",
           store::ActionStatus::sent,
           "dispatchd",
           "wamid.out11",
           std::nullopt,
           "2026-11-30T12:00:09Z"};
  a.created_at = "2026-11-30T12:00:05Z";
  a.deliveries = {
      {40, "2026-11-30T12:01:00Z", store::DeliveryStatus::delivered, "delivered", "wamid.out11", std::nullopt},
      {41, "2026-11-30T12:02:00Z", store::DeliveryStatus::failed, "failed", std::nullopt,
       "(#131026) undeliverable\nretry | later"}};
  t.actions = {a};
  const std::string md = staff::trail_markdown(t);
  CHECK(md.find("| 11 | send\\_message | sent | dispatchd | 15551234567 | wamid.out11 | - |") != std::string::npos);
  CHECK(md.find("Body sent to 15551234567:\n\n```text\nIt ships today\n```\n") != std::string::npos);
  CHECK(md.find("- delivery delivered at 2026-11-30T12:01:00Z (wamid.out11)\n") != std::string::npos);
  CHECK(md.find("- delivery failed at 2026-11-30T12:02:00Z: (#131026) undeliverable retry \\| later\n") !=
        std::string::npos);
  const auto json = parse_json(staff::trail_json(t));
  const auto& row = json["actions"][0];
  CHECK(std::string(row["arguments"]["content"].GetString()) == "It ships today");
  REQUIRE(row["deliveries"].Size() == 2);
  CHECK(std::string(row["deliveries"][0]["status"].GetString()) == "delivered");
  CHECK(row["deliveries"][1]["provider_message_id"].IsNull());
  CHECK(json["decision"]["sent_actions"][0].GetInt() == 11);
}

TEST_CASE("trail: the message's files with kind, state, both types, size, sha256 and reason", "[trail]") {
  auto t = hand_made();
  CHECK(staff::trail_markdown(t).find("## Files\n\nNone.\n") != std::string::npos);
  CHECK(parse_json(staff::trail_json(t))["media"].Size() == 0);
  store::MediaRow kept;
  kept.id = 21;
  kept.kind = store::MediaKind::image;
  kept.provider_ref = "7001";
  kept.declared_type = "image/png";
  kept.filename = "foto|1.png";
  kept.state = store::MediaState::stored;
  kept.attempts = 1;
  kept.size = 4096;
  kept.sha256 = std::string(64, 'c');
  kept.sniffed_type = "image/svg+xml";
  kept.type_mismatch = true;
  kept.created_at = "2026-11-30T12:00:00Z";
  kept.fetched_at = "2026-11-30T12:00:02Z";
  store::MediaRow big;
  big.id = 22;
  big.position = 1;
  big.kind = store::MediaKind::audio;
  big.voice = true;
  big.declared_type = "audio/ogg; codecs=opus";
  big.declared_sha256 = std::string(64, 'd');
  big.state = store::MediaState::over_cap;
  big.reason = "larger than its cap of 16777216 bytes";
  big.created_at = "2026-11-30T12:00:00Z";
  t.media = {kept, big};

  const std::string md = staff::trail_markdown(t);
  CHECK(md.find("| Media id | Kind | File name | State | Declared type | Sniffed type | Size | sha256 | Reason |") !=
        std::string::npos);
  CHECK(md.find("| 21 | image | foto\\|1.png | stored | image/png | image/svg+xml (not the declared type) | 4096 | " +
                std::string(64, 'c') + " | - |") != std::string::npos);
  CHECK(md.find("| 22 | audio (voice note) | - | over\\_cap | audio/ogg; codecs=opus | - | - | - | larger than its "
                "cap of 16777216 bytes |") != std::string::npos);

  const auto json = parse_json(staff::trail_json(t));
  REQUIRE(json["media"].Size() == 2);
  const auto& a = json["media"][0];
  CHECK(a["media_id"].GetInt() == 21);
  CHECK(std::string(a["kind"].GetString()) == "image");
  CHECK(std::string(a["state"].GetString()) == "stored");
  CHECK(std::string(a["declared_type"].GetString()) == "image/png");
  CHECK(std::string(a["sniffed_type"].GetString()) == "image/svg+xml");
  CHECK(a["type_mismatch"].GetBool());
  CHECK(a["size"].GetInt() == 4096);
  CHECK(std::string(a["sha256"].GetString()) == std::string(64, 'c'));
  CHECK(std::string(a["filename"].GetString()) == "foto|1.png");
  CHECK(a["reason"].IsNull());
  const auto& b = json["media"][1];
  CHECK(b["position"].GetInt() == 1);
  CHECK(b["voice"].GetBool());
  CHECK(std::string(b["state"].GetString()) == "over_cap");
  CHECK(std::string(b["reason"].GetString()) == "larger than its cap of 16777216 bytes");
  CHECK(b["size"].IsNull());
  CHECK(b["sha256"].IsNull());
  CHECK(b["sniffed_type"].IsNull());
  CHECK(std::string(b["declared_sha256"].GetString()) == std::string(64, 'd'));
  CHECK(b["fetched_at"].IsNull());
}

TEST_CASE("trail: a broken chain is said in both documents", "[trail]") {
  auto t = hand_made();
  t.chain = store::TrailChain{4, 9, {3, 6, "its contents do not match its hash: the row was changed"}};
  const std::string md = staff::trail_markdown(t);
  CHECK(md.find("**The chain does NOT verify** across audit ids 4 to 9: broken at audit id 6") != std::string::npos);
  const auto json = parse_json(staff::trail_json(t));
  CHECK_FALSE(json["chain"]["verified"].GetBool());
  CHECK(json["chain"]["first_broken"].GetInt() == 6);
  CHECK(std::string(json["chain"]["reason"].GetString()).find("the row was changed") != std::string::npos);
  t.chain.reset();
  CHECK(parse_json(staff::trail_json(t))["chain"].IsNull());
  CHECK(staff::trail_markdown(t).find("No audit events: nothing to verify.") != std::string::npos);
}

TEST_CASE("trail JSON: the staff-edited message's content", "[trail]") {
  const auto json = parse_json(staff::trail_json(seeded_trail(4)));
  CHECK(std::string(json["message"]["provider_message_id"].GetString()) == "wamid.seed4");
  CHECK(std::string(json["message"]["outcome"].GetString()) == "escalated");
  CHECK_FALSE(json["context"]["prompt_stored"].GetBool());
  CHECK(json["context"]["history"].Size() == 2);
  CHECK(std::string(json["context"]["history"][1]["from"].GetString()) == "us");
  REQUIRE(json["attempts"].Size() == 1);
  CHECK(std::string(json["attempts"][0]["verdict"].GetString()) == "review");
  CHECK(std::string(json["attempts"][0]["request_summary"].GetString()) == R"({"turns":2})");
  REQUIRE(json["actions"].Size() == 2);
  CHECK(std::string(json["actions"][0]["status"].GetString()) == "rejected");
  const auto& sent = json["actions"][1];
  CHECK(std::string(sent["created_by"].GetString()) == "ana");
  CHECK(std::string(sent["status"].GetString()) == "sent");
  CHECK(std::string(sent["provider_message_id"].GetString()) == "out.dispatchd-4-2");
  CHECK(std::string(sent["arguments"]["content"].GetString()) == "Your refund for ORD-1001 is on its way (3-5 days).");
  REQUIRE(json["escalations"].Size() == 1);
  CHECK(std::string(json["escalations"][0]["resolution"].GetString()) == "edited");
  CHECK(std::string(json["escalations"][0]["proposed_action"]["content"].GetString()) == "Refund approved.");
  REQUIRE(json["staff_actions"].Size() == 4);
  for (const auto& a : json["staff_actions"].GetArray()) CHECK(std::string(a["actor"].GetString()) == "ana");
  CHECK(std::string(json["decision"]["outcome"].GetString()) == "escalated");
  CHECK(json["decision"]["sent_actions"].Size() == 1);
  CHECK(json["decision"]["sent_actions"][0].GetInt() == 3);
  CHECK(json["audit"].Size() == 11);
  CHECK(std::string(json["audit"][0]["hash"].GetString()).size() == 64);
  CHECK(json["chain"]["verified"].GetBool());
  CHECK(json["chain"]["events"].GetInt() == 11);
}

TEST_CASE("trail JSON: the escalated message's repairs and errors", "[trail]") {
  const auto json = parse_json(staff::trail_json(seeded_trail(2)));
  REQUIRE(json["attempts"].Size() == 2);
  REQUIRE(json["attempts"][0]["repairs"].Size() == 1);
  CHECK(std::string(json["attempts"][0]["repairs"][0]["code"].GetString()) == "fence");
  CHECK(std::string(json["attempts"][0]["errors"][0]["code"].GetString()) == "enum");
  CHECK(json["attempts"][1]["repairs"].Size() == 0);
  CHECK(json["tool_calls"].Size() == 0);
  CHECK(std::string(json["escalations"][0]["reason"].GetString()) == "model_escalated");
  CHECK(std::string(json["decision"]["summary"].GetString()) == "escalated (model_escalated); escalation 1 open");
  CHECK(json["actions"].Size() == 0);
}

}  // namespace dispatchd::test
