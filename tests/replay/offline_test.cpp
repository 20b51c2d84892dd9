// Offline replay of the seeded history (tests/support/seed.h: replies of send_message and
// escalate_to_human, re-asks, a recipient refusal, a truncated reply) against copies of
// the shipped English catalog with one thing changed each.
#include <catch2/catch.hpp>
#include <functional>
#include <set>
#include <utility>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "replay/offline.h"
#include "store/attempts.h"
#include "tests/store/store_fixture.h"
#include "tests/support/seed.h"
#include "tests/test_util.h"

using namespace dispatchd;

namespace {

struct Seeded {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  Seeded() { REQUIRE(test::seed_history(db, test::k_t0)); }
};

// support.en.json with `edit` applied to its parsed document.
catalog::Catalog changed_catalog(const std::function<void(rapidjson::Document&)>& edit) {
  auto doc = test::parse_json(test::read_file(test::source_path("catalog/examples/support.en.json")));
  edit(doc);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  auto catalog = catalog::Catalog::parse(buffer.GetString(), "changed");
  if (!catalog) FAIL(catalog.error().front().to_string());
  return std::move(*catalog);
}

catalog::Catalog without_action(const std::string& name) {
  return changed_catalog([&](rapidjson::Document& doc) {
    auto& actions = doc["actions"];
    for (auto it = actions.Begin(); it != actions.End(); ++it) {
      if ((*it)["name"].GetString() == name) {
        actions.Erase(it);
        return;
      }
    }
    FAIL("no action " << name);
  });
}

replay::Report replayed(store::Database& db, const catalog::Catalog& catalog, const replay::Selection& selection = {}) {
  auto report = replay::run_offline(db, catalog, selection);
  REQUIRE(report);
  return std::move(*report);
}

// (provider id, attempt) of every change of one kind.
std::set<std::pair<std::string, std::int64_t>> changed(const replay::Report& report, replay::Flip flip) {
  std::set<std::pair<std::string, std::int64_t>> out;
  for (const auto& c : report.changes)
    if (c.flip == flip) out.insert({c.provider_message_id, c.attempt});
  return out;
}

using Set = std::set<std::pair<std::string, std::int64_t>>;

}  // namespace

TEST_CASE("replay: the catalog the history was recorded with changes nothing", "[replay]") {
  Seeded s;
  const auto report = replayed(s.db, test::support_en());
  // Seven messages have attempts (the eighth waits); ten attempts, all with output.
  CHECK(report.summary.messages == 7);
  CHECK(report.summary.attempts == 10);
  CHECK(report.summary.not_checked == 0);
  CHECK(report.summary.total.checked == 10);
  CHECK(report.summary.total.unchanged == 10);
  CHECK(report.changes.empty());
  CHECK(report.summary.per_action.at("send_message").checked == 7);
  CHECK(report.summary.per_action.at("").checked == 1);  // m3's cut-off reply names no action
  CHECK(report.summary.per_action.at("escalate_to_human").checked == 1);
  CHECK(report.summary.per_action.at("reply").checked == 1);  // the enum error m2 fixed on its re-ask
}

TEST_CASE("replay: removing an action lists exactly the replies that chose it", "[replay]") {
  Seeded s;
  SECTION("escalate_to_human") {
    const auto report = replayed(s.db, without_action("escalate_to_human"));
    CHECK(changed(report, replay::Flip::valid_to_refused) == Set{{"wamid.seed2", 2}});
    CHECK(changed(report, replay::Flip::refused_to_valid).empty());
    const auto& c = report.changes.at(0);
    CHECK(c.action == "escalate_to_human");
    CHECK(c.recorded_verdict == "valid");
    REQUIRE(c.errors.size() == 1);
    CHECK(c.errors[0].path == "/action");
    CHECK(c.errors[0].code == "enum");
    CHECK(report.summary.per_action.at("escalate_to_human").valid_to_refused == 1);
    CHECK(report.summary.total.unchanged == 9);
  }
  SECTION("send_message") {
    const auto report = replayed(s.db, without_action("send_message"));
    // Every accepted send_message (review-flagged ones too); m3's refused ones stay refused.
    CHECK(changed(report, replay::Flip::valid_to_refused) ==
          Set{{"wamid.seed1", 1}, {"wamid.seed4", 1}, {"18c2f0a1b2c3d4e5", 1}, {"wamid.seed6", 1}, {"wamid.seed7", 1}});
    CHECK(changed(report, replay::Flip::refused_to_valid).empty());
    CHECK(report.summary.per_action.at("send_message").valid_to_refused == 5);
    CHECK(report.summary.per_action.at("send_message").unchanged == 2);  // m3's refused ones
    // In received_at order.
    CHECK(report.changes.front().provider_message_id == "wamid.seed1");
    CHECK(report.changes.back().provider_message_id == "wamid.seed7");
  }
}

TEST_CASE("replay: a tighter field refuses the replies that no longer fit", "[replay]") {
  Seeded s;
  const auto report = replayed(
      s.db, changed_catalog([](rapidjson::Document& doc) { doc["fields"]["content"]["maxLength"].SetInt(20); }));
  // Contents longer than 20 code points: "ORD-1001 ships tomorrow.", "Customer asks for a
  // person", "Yes, it was sent yesterday.", "Your subscription is cancelled.".
  CHECK(changed(report, replay::Flip::valid_to_refused) ==
        Set{{"wamid.seed1", 1}, {"wamid.seed2", 2}, {"18c2f0a1b2c3d4e5", 1}, {"wamid.seed7", 1}});
  for (const auto& c : report.changes) {
    REQUIRE(c.errors.size() == 1);
    CHECK(c.errors[0].path == "/content");
    CHECK(c.errors[0].code == "max_length");
  }
  CHECK(report.summary.per_action.at("escalate_to_human").valid_to_refused == 1);
  CHECK(report.summary.per_action.at("send_message").valid_to_refused == 3);
}

TEST_CASE("replay: a refused reply the new catalog accepts flips the other way", "[replay]") {
  Seeded s;
  SECTION("without the recipient policy: the policy check used the message's own sender") {
    const auto report = replayed(s.db, changed_catalog([](rapidjson::Document& doc) {
                                   for (auto& action : doc["actions"].GetArray()) action.RemoveMember("policy");
                                 }));
    // m3's first two replies went to another number; its third is cut off and stays refused.
    CHECK(changed(report, replay::Flip::refused_to_valid) == Set{{"wamid.seed3", 1}, {"wamid.seed3", 2}});
    CHECK(changed(report, replay::Flip::valid_to_refused).empty());
    const auto& c = report.changes.at(0);
    CHECK(c.recorded_verdict == "invalid");
    REQUIRE(c.recorded_errors.size() == 1);
    CHECK(c.recorded_errors[0].code == "recipient");
  }
  SECTION("with \"reply\" in the catalog: the enum error m2 re-asked for is gone") {
    const auto report = replayed(s.db, changed_catalog([](rapidjson::Document& doc) {
                                   rapidjson::Value copy(doc["actions"][0], doc.GetAllocator());
                                   copy["name"].SetString("reply");
                                   copy.RemoveMember("examples");
                                   doc["actions"].PushBack(copy, doc.GetAllocator());
                                 }));
    CHECK(changed(report, replay::Flip::refused_to_valid) == Set{{"wamid.seed2", 1}});
    CHECK(report.changes.at(0).action == "reply");
  }
}

TEST_CASE("replay: --since and --limit choose the messages by received_at", "[replay]") {
  Seeded s;
  const auto catalog = without_action("send_message");
  SECTION("since the second day") {
    const auto report = replayed(s.db, catalog, {.since = "2026-12-01"});
    CHECK(report.summary.messages == 4);  // m4 to m7; m8 has no attempts
    CHECK(changed(report, replay::Flip::valid_to_refused) ==
          Set{{"wamid.seed4", 1}, {"18c2f0a1b2c3d4e5", 1}, {"wamid.seed6", 1}, {"wamid.seed7", 1}});
  }
  SECTION("since a day after the history") {
    const auto report = replayed(s.db, catalog, {.since = "2026-12-02"});
    CHECK(report.summary.messages == 0);
    CHECK(report.summary.attempts == 0);
  }
  SECTION("the first two messages") {
    const auto report = replayed(s.db, catalog, {.limit = 2});
    CHECK(report.summary.messages == 2);
    CHECK(report.summary.attempts == 3);  // m1's one, m2's two
    CHECK(changed(report, replay::Flip::valid_to_refused) == Set{{"wamid.seed1", 1}});
  }
  SECTION("since and limit together") {
    const auto report = replayed(s.db, catalog, {.since = "2026-12-01", .limit = 1});
    CHECK(report.summary.messages == 1);
    CHECK(changed(report, replay::Flip::valid_to_refused) == Set{{"wamid.seed4", 1}});
  }
}

TEST_CASE("replay: --sample picks the same messages for the same seed", "[replay]") {
  Seeded s;
  const auto catalog = without_action("send_message");
  const auto ids = [&](const replay::Selection& selection) {
    std::vector<std::int64_t> out;
    auto report = replayed(s.db, catalog, selection);
    for (const auto& c : report.changes) out.push_back(c.message_id);
    return std::pair{report.summary.messages, out};
  };
  const auto a = ids({.sample = 3, .seed = 7});
  CHECK(a.first == 3);
  CHECK(ids({.sample = 3, .seed = 7}) == a);
  CHECK(ids({.sample = 100}).first == 7);  // a sample larger than the window is the window
  // Different seeds choose different samples (over the 35 ways to pick 3 of 7, some seed differs).
  bool differs = false;
  for (std::uint64_t seed = 8; seed < 40 && !differs; ++seed) differs = ids({.sample = 3, .seed = seed}) != a;
  CHECK(differs);
  // The sample is taken from the window: with a limit of 2, only m1 and m2 can be in it.
  CHECK(ids({.limit = 2, .sample = 5}).first == 2);
}

TEST_CASE("replay: attempts without a validator verdict are not judged again", "[replay]") {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  auto id = store::insert_inbound(db, {"whatsapp", "wamid.x", "c", "15551230001", "hi", "{}"}, test::k_t0);
  REQUIRE(id);
  const std::string valid = R"({"action":"send_message","recipient":"15551230001","content":"Hi","priority":"low"})";
  // A parseable answer the provider cut off at the output limit, a blocked one, and a
  // transport error: none was the validator's to refuse.
  struct Recorded {
    std::optional<std::string> raw;
    store::Verdict verdict;
    std::string error_class;
    std::optional<std::string> finish_reason;
  };
  const std::vector<Recorded> recorded{{valid, store::Verdict::invalid, "truncated", "length"},
                                       {valid, store::Verdict::invalid, "blocked", std::nullopt},
                                       {std::nullopt, store::Verdict::error, "bad_response", std::nullopt},
                                       {valid, store::Verdict::invalid, "enum", "stop"}};
  int n = 0;
  for (const auto& r : recorded) {
    REQUIRE(store::record_attempt(db,
                                  {.message_id = id->id,
                                   .attempt = ++n,
                                   .provider = "openai",
                                   .model = "m",
                                   .raw_output = r.raw,
                                   .verdict = r.verdict,
                                   .error_class = r.error_class,
                                   .finish_reason = r.finish_reason},
                                  test::k_t0));
  }
  const auto report = replayed(db, test::support_en());
  CHECK(report.summary.attempts == 4);
  CHECK(report.summary.not_checked == 3);
  CHECK(report.summary.total.checked == 1);
  CHECK(changed(report, replay::Flip::refused_to_valid) == Set{{"wamid.x", 4}});
}

TEST_CASE("replay: the Markdown and JSON reports carry the same changes", "[replay]") {
  Seeded s;
  auto report = replayed(s.db, without_action("escalate_to_human"), {.since = "2026-11-30"});
  report.catalog = "no-escalate.json";
  const std::string md = replay::to_markdown(report);
  CHECK_THAT(md, Catch::StartsWith("# Offline replay\n"));
  for (const char* heading : {"\n## Summary\n", "\n## Per action\n", "\n## Changes\n", "\n### valid → refused (1)\n",
                              "\n### refused → valid (0)\n"})
    CHECK_THAT(md, Catch::Contains(heading));
  CHECK_THAT(md, Catch::Contains("- catalog: `no-escalate.json`"));
  CHECK_THAT(md, Catch::Contains("- messages received since: 2026-11-30 (UTC)"));
  CHECK_THAT(md, Catch::Contains("| valid → refused | 1 |"));
  CHECK_THAT(md, Catch::Contains("| escalate\\_to\\_human | 1 | 0 | 1 | 0 |"));
  CHECK_THAT(md, Catch::Contains("| 2 | wamid.seed2 | whatsapp | 2026-11-30T12:10:00Z | 2 | escalate\\_to\\_human | "
                                 "valid | /action enum: "));

  const auto doc = test::parse_json(replay::to_json(report));
  CHECK(std::string(doc["mode"].GetString()) == "offline");
  CHECK(std::string(doc["selection"]["since"].GetString()) == "2026-11-30");
  CHECK(doc["selection"]["limit"].IsNull());
  CHECK(doc["summary"]["checked"].GetInt() == 10);
  CHECK(doc["summary"]["valid_to_refused"].GetInt() == 1);
  REQUIRE(doc["changes"].Size() == 1);
  const auto& c = doc["changes"][0];
  CHECK(c["message_id"].GetInt() == 2);
  CHECK(std::string(c["provider_message_id"].GetString()) == "wamid.seed2");
  CHECK(std::string(c["change"].GetString()) == "valid_to_refused");
  CHECK(std::string(c["errors"][0]["code"].GetString()) == "enum");
}

TEST_CASE("replay: provider ids and errors cannot break the Markdown table", "[replay]") {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  auto id = store::insert_inbound(db, {"gmail", "id|with\nnewline`", "c", "a@example.com", "hi", "{}"}, test::k_t0);
  REQUIRE(id);
  REQUIRE(store::record_attempt(db,
                                {.message_id = id->id,
                                 .attempt = 1,
                                 .provider = "openai",
                                 .model = "m",
                                 .raw_output = R"({"action":"send_message","recipient":"a@example.com",)"
                                               R"("content":"a|b","priority":"low"})",
                                 .verdict = store::Verdict::valid},
                                test::k_t0));
  const auto md = replay::to_markdown(replayed(db, without_action("send_message")));
  CHECK_THAT(md, Catch::Contains("| id\\|with newline\\` |"));
}
