// Online replay and eval: recorded messages sent through the agent loop again
// against the fake model, in a scratch copy; a labelled set scored. History is recorded by
// the real agent loop (tests/agent/harness.h) with one model answer; the replay's model
// answers differently for some messages, and exactly those must be reported as changed.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <set>

#include "replay/eval.h"
#include "replay/online.h"
#include "store/migrations.h"
#include "tests/agent/harness.h"
#include "tests/fakes/fake_graph.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;

namespace {
// The channels an eval case may name (dispatchctl passes the registry's).
constexpr std::string_view k_eval_channel_names[] = {"whatsapp", "gmail"};
const std::span<const std::string_view> k_eval_channels = k_eval_channel_names;
}  // namespace

namespace {

constexpr const char* k_escalate =
    R"({"action":"escalate_to_human","recipient":"15551234567","content":"wants a refund","priority":"high"})";

// Four recorded messages, each in a conversation of its own, all answered with one reply.
struct Recorded {
  test::AgentHarness h;
  std::vector<std::int64_t> ids;

  Recorded() {
    h.fake.set_fallback(fakes::FakeReply::text(test::send_message(test::k_customer, "We are on it")));
    const std::vector<std::string> texts = {"where is my order?", "I want my moneyback", "is the shop open?",
                                            "moneyback now"};
    for (std::size_t i = 0; i < texts.size(); ++i)
      ids.push_back(
          h.receive("wamid.rec" + std::to_string(i + 1), texts[i], test::k_customer, "conv" + std::to_string(i + 1)));
    h.decide(texts.size());
    // The replay's model: the same answer, except that money-back requests now go to a person.
    h.fake.set_responder([](const fakes::ReceivedRequest& r) -> std::optional<fakes::FakeReply> {
      if (r.body.find("moneyback") != std::string::npos) return fakes::FakeReply::text(k_escalate);
      return std::nullopt;
    });
  }

  replay::ModelOptions options(std::size_t concurrency = 2) {
    ::setenv("DISPATCHD_REPLAY_TEST_KEY", "sk-test", 1);
    config::Config config;
    config.llm.provider = "openai";
    config.llm.base_url = h.fake.base_url(fakes::Dialect::openai);
    config.llm.model = "config-model";
    config.llm.api_key_env = "DISPATCHD_REPLAY_TEST_KEY";
    config.llm.timeout_ms = 20000;
    // USD per million tokens: the report's cost is what the agent recorded with these.
    config.llm.prices["replay-model"] = {.input = 1.0, .output = 2.0};
    auto options = replay::model_options(config, test::support_en(), {"replay-model", "Be kind.", concurrency});
    REQUIRE(options);
    return std::move(*options);
  }

  std::string scratch() const { return h.dir.file("report.md.scratch.db"); }
};

replay::OnlineReport collected(store::Database& scratch) {
  auto report = replay::collect(scratch, test::support_en(), "replay-model");
  REQUIRE(report);
  return std::move(*report);
}

}  // namespace

TEST_CASE("online replay reports exactly the changed decisions and sends nothing", "[replay][online]") {
  Recorded r;
  fakes::FakeGraph graph;
  const auto before = r.h.fake.request_count();
  bool resumed = true;
  auto scratch = replay::open_scratch(r.h.db, {}, {r.scratch(), test::source_path("migrations")}, resumed);
  REQUIRE(scratch);
  CHECK_FALSE(resumed);
  auto ran = replay::run_pending(*scratch, r.options());
  REQUIRE(ran);
  CHECK(*ran == replay::RunEnd::complete);
  CHECK(r.h.fake.request_count() - before == 4);
  const auto requests = r.h.fake.requests();
  for (std::size_t i = before; i < requests.size(); ++i) {
    const auto& body = requests[i].body;
    CHECK(body.find("\"replay-model\"") != std::string::npos);  // --llm-model
    CHECK(body.find("Be kind.") != std::string::npos);          // --system-prompt
  }

  const auto report = collected(*scratch);
  CHECK_FALSE(report.partial);
  CHECK(report.summary.decided == 4);
  CHECK(report.summary.changed == 2);
  CHECK(report.summary.escalated == 2);
  CHECK(report.summary.valid_first == 4);
  CHECK(report.summary.attempts == 4);
  CHECK(report.summary.input_tokens == 44);  // the fake's 11 per answer
  CHECK(report.summary.output_tokens == 28);
  REQUIRE(report.summary.cost);
  CHECK(*report.summary.cost == Approx((44 * 1.0 + 28 * 2.0) / 1e6));  // llm.prices above
  REQUIRE(report.summary.p50);
  std::set<std::string> changed;
  for (const auto& m : report.messages) {
    if (m.changes.empty()) {
      CHECK(m.replayed.kind == store::DecisionKind::reply);
      continue;
    }
    changed.insert(m.row.provider_message_id);
    CHECK(m.recorded.kind == store::DecisionKind::reply);
    CHECK(m.recorded.action == "send_message");
    CHECK(m.recorded.recipient == test::k_customer);
    CHECK(m.replayed.kind == store::DecisionKind::escalate);
    CHECK(m.replayed.reason == "model_escalated");
    CHECK(m.replayed.action == "escalate_to_human");
    CHECK(std::ranges::find(m.changes, "field content") != m.changes.end());
    CHECK(std::ranges::find(m.changes, "field priority") != m.changes.end());
  }
  CHECK(changed == std::set<std::string>{"wamid.rec2", "wamid.rec4"});

  const auto md = replay::to_markdown(report);
  CHECK_THAT(md, Catch::StartsWith("# Online replay\n"));
  CHECK_THAT(md, Catch::Contains("## Changed decisions (2)"));
  CHECK_THAT(md, Catch::Contains("### message " + std::to_string(r.ids[1]) + " (wamid.rec2)"));
  CHECK_THAT(md, Catch::Contains("| escalation reason | - | model\\_escalated |"));
  CHECK_THAT(md, Catch::Contains("| valid on the first attempt | 4 (100.0%) |"));
  const auto json = test::parse_json(replay::to_json(report));
  CHECK(json["summary"]["changed"].GetInt() == 2);
  CHECK(json["messages"].Size() == 4);

  // Nothing left the scratch copy: no Graph request, and the live database is as recorded.
  CHECK(graph.requests().empty());
  CHECK(r.h.count("SELECT count(*) FROM attempts") == 4);
  CHECK(r.h.count("SELECT count(*) FROM escalations") == 0);
  auto live_scratch = store::is_replay_scratch(r.h.db);
  REQUIRE(live_scratch);
  CHECK_FALSE(*live_scratch);
  // The new replies wait, approved, in the scratch outbox: no connector runs on it.
  CHECK(test::query_int(*scratch,
                        "SELECT count(*) FROM actions WHERE status NOT IN ('approved', 'proposed')"
                        " AND id >= (SELECT first_action FROM replay_marks)")
            .value() == 0);
}

TEST_CASE("an interrupted online replay leaves a partial report and resumes where it stopped", "[replay][online]") {
  Recorded r;
  const auto before = r.h.fake.request_count();
  bool resumed = false;
  std::vector<std::int64_t> reported;
  {
    auto scratch = replay::open_scratch(r.h.db, {}, {r.scratch(), test::source_path("migrations")}, resumed);
    REQUIRE(scratch);
    volatile std::sig_atomic_t interrupt = 0;
    // As Ctrl-C after the first message: one at a time, so exactly one is done.
    auto ran = replay::run_pending(*scratch, r.options(1), {&interrupt, [&](std::int64_t id) {
                                                              reported.push_back(id);
                                                              interrupt = 1;
                                                            }});
    REQUIRE(ran);
    CHECK(*ran == replay::RunEnd::interrupted);
    const auto report = collected(*scratch);
    CHECK(report.partial);
    CHECK(report.summary.decided == 1);
    CHECK(report.summary.pending == 3);
    const auto md = replay::to_markdown(report);
    CHECK_THAT(md, Catch::StartsWith("# Online replay (partial)\n"));
    CHECK_THAT(md, Catch::Contains("partial: 3 of 4 messages not replayed yet"));
  }
  auto scratch = replay::open_scratch(r.h.db, {}, {r.scratch(), test::source_path("migrations")}, resumed);
  REQUIRE(scratch);
  CHECK(resumed);
  auto ran = replay::run_pending(*scratch, r.options(), {nullptr, [&](std::int64_t id) { reported.push_back(id); }});
  REQUIRE(ran);
  CHECK(*ran == replay::RunEnd::complete);
  // Every message once: decided once, asked once, reported once.
  CHECK(std::set<std::int64_t>(reported.begin(), reported.end()) == std::set<std::int64_t>(r.ids.begin(), r.ids.end()));
  CHECK(reported.size() == 4);
  CHECK(r.h.fake.request_count() - before == 4);
  const auto report = collected(*scratch);
  CHECK_FALSE(report.partial);
  REQUIRE(report.messages.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(report.messages[i].row.message_id == r.ids[i]);
  CHECK(report.summary.changed == 2);
}

TEST_CASE("a message half-way through a stopped run is asked again from the start", "[replay][online]") {
  Recorded r;
  bool resumed = false;
  {
    auto scratch = replay::open_scratch(r.h.db, {}, {r.scratch(), test::source_path("migrations")}, resumed);
    REQUIRE(scratch);
    // As if killed after the first attempt of the first message, before its decision.
    REQUIRE(test::exec(*scratch,
                       "UPDATE inbox SET state = 'processing', lease_owner = 'x', lease_expires_at = "
                       "'2999-01-01T00:00:00Z' WHERE id = " +
                           std::to_string(r.ids[0])));
    REQUIRE(test::exec(*scratch,
                       "INSERT INTO attempts(message_id, attempt, provider, model, verdict, created_at) VALUES (" +
                           std::to_string(r.ids[0]) + ", 1, 'openai', 'm', 'invalid', '2026-12-01T00:00:00Z')"));
  }
  auto scratch = replay::open_scratch(r.h.db, {}, {r.scratch(), test::source_path("migrations")}, resumed);
  REQUIRE(scratch);
  REQUIRE(replay::run_pending(*scratch, r.options()));
  const auto report = collected(*scratch);
  REQUIRE(report.messages.size() == 4);
  CHECK(report.messages[0].attempts.size() == 1);  // the stale attempt is gone
  CHECK(report.summary.valid_first == 4);
}

TEST_CASE("online replay's provider sends prompt_cache_key as the configuration says", "[replay][online]") {
  ::setenv("DISPATCHD_REPLAY_TEST_KEY", "sk-test", 1);
  config::Config config;
  config.llm.provider = "openai";
  config.llm.api_key_env = "DISPATCHD_REPLAY_TEST_KEY";
  for (const bool on : {false, true}) {
    config.llm.prompt_cache_key = on;
    const auto options = replay::model_options(config, test::support_en(), {});
    REQUIRE(options);
    CHECK(options->provider.prompt_cache_key == on);
  }
}

TEST_CASE("online replay pinned to a fallback asks that provider only, as configured", "[replay][online]") {
  Recorded r;
  ::setenv("DISPATCHD_REPLAY_TEST_KEY", "sk-test", 1);
  ::setenv("DISPATCHD_REPLAY_FALLBACK_KEY", "sk-fallback", 1);
  config::Config config;
  config.llm.provider = "openai";
  config.llm.base_url = r.h.fake.base_url(fakes::Dialect::openai);
  config.llm.model = "config-model";
  config.llm.api_key_env = "DISPATCHD_REPLAY_TEST_KEY";
  config.llm.timeout_ms = 20000;
  config.llm.max_concurrency = 8;
  config.llm.prompt_cache_key = true;
  config.llm.fallbacks.push_back({.provider = "anthropic",
                                  .base_url = r.h.fake.base_url(fakes::Dialect::anthropic),
                                  .model = "fallback-model",
                                  .api_key_env = "DISPATCHD_REPLAY_FALLBACK_KEY",
                                  .timeout_ms = 7000,
                                  .max_concurrency = 3});

  SECTION("the options are the fallback's") {
    replay::Overrides pinned;
    pinned.fallback = 1;
    const auto options = replay::model_options(config, test::support_en(), pinned);
    REQUIRE(options);
    CHECK(options->provider.kind == llm::ProviderKind::anthropic);
    CHECK(options->provider.base_url == config.llm.fallbacks[0].base_url);
    CHECK(options->provider.model == "fallback-model");
    CHECK(options->provider.api_key == "sk-fallback");
    CHECK(options->provider.timeout == std::chrono::milliseconds(7000));
    CHECK_FALSE(options->provider.prompt_cache_key);  // OpenAI's field only
    CHECK(options->settings.max_in_flight == 3);
    pinned.model = "other-model";  // --llm-model still wins
    pinned.concurrency = 5;
    const auto overridden = replay::model_options(config, test::support_en(), pinned);
    REQUIRE(overridden);
    CHECK(overridden->provider.model == "other-model");
    CHECK(overridden->settings.max_in_flight == 5);
    const auto primary = replay::model_options(config, test::support_en(), {});
    REQUIRE(primary);
    CHECK(primary->provider.kind == llm::ProviderKind::openai);
    CHECK(primary->provider.model == "config-model");
    CHECK(primary->settings.max_in_flight == 8);
  }

  SECTION("an entry that is not there is refused by number") {
    for (const std::size_t n : {0, 2}) {
      replay::Overrides pinned;
      pinned.fallback = n;
      const auto options = replay::model_options(config, test::support_en(), pinned);
      REQUIRE_FALSE(options);
      CHECK_THAT(options.error(), Catch::Contains("--llm-fallback " + std::to_string(n)) &&
                                      Catch::Contains("llm.fallbacks has 1 entries"));
    }
  }

  SECTION("every call goes to the fallback, and the attempts name it") {
    const auto before = r.h.fake.request_count();
    replay::Overrides pinned;
    pinned.fallback = 1;
    auto options = replay::model_options(config, test::support_en(), pinned);
    REQUIRE(options);
    bool resumed = true;
    auto scratch = replay::open_scratch(r.h.db, {}, {r.scratch(), test::source_path("migrations")}, resumed);
    REQUIRE(scratch);
    REQUIRE(replay::run_pending(*scratch, std::move(*options)));
    const auto requests = r.h.fake.requests();
    REQUIRE(requests.size() - before == 4);
    for (std::size_t i = before; i < requests.size(); ++i) {
      CHECK(requests[i].dialect == fakes::Dialect::anthropic);
      CHECK(requests[i].header("x-api-key") == "sk-fallback");
      CHECK(requests[i].body.find("\"fallback-model\"") != std::string::npos);
    }
    const auto replayed = test::query_int(*scratch, "SELECT count(*) FROM attempts");
    const auto by_fallback = test::query_int(
        *scratch, "SELECT count(*) FROM attempts WHERE provider = 'anthropic' AND model = 'fallback-model'");
    REQUIRE(replayed);
    REQUIRE(by_fallback);
    CHECK(*replayed == 4);
    CHECK(*by_fallback == 4);
  }
}

TEST_CASE("a scratch path that holds something else is refused", "[replay][online]") {
  Recorded r;
  bool resumed = false;
  // A store database that is not a scratch copy (on SQLite, the live file itself).
  const std::string path = r.h.dir.file("other.db");
  {
    auto db = store::Database::open(path);
    REQUIRE(db);
    const auto migrations = store::load_migrations(test::source_path("migrations"), store::Backend::sqlite);
    REQUIRE(migrations);
    REQUIRE(store::migrate(*db, *migrations, store::format_time(test::k_t0)));
  }
  auto other = replay::open_scratch(r.h.db, {}, {path, test::source_path("migrations")}, resumed);
  REQUIRE_FALSE(other);
  CHECK_THAT(other.error(), Catch::Contains("not a replay's scratch database"));
}

TEST_CASE("eval sets: bad lines are named by number", "[replay][eval]") {
  const std::string good = R"({"channel":"whatsapp","sender":"1","text":"hi","expected_action":"send_message"})";
  const auto error_of = [](const std::string& text) {
    auto set = replay::parse_set(text, k_eval_channels);
    REQUIRE_FALSE(set);
    return set.error();
  };
  auto parsed = replay::parse_set(good + "\n\n" + good + "\r\n", k_eval_channels);
  REQUIRE(parsed);
  CHECK(parsed->size() == 2);
  CHECK((*parsed)[1].line == 3);
  CHECK((*parsed)[1].id == "line 3");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{not json", "not JSON"},
      {R"({"channel":"sms","sender":"1","text":"hi","must_escalate":true})", "\"channel\""},
      {R"({"channel":"gmail","sender":"1","text":"hi"})", "either \"expected_action\""},
      {R"({"channel":"gmail","sender":"1","text":"hi","must_escalate":true,"expected_action":"x"})", "either"},
      {R"({"channel":"gmail","sender":"1","text":"hi","must_escalate":true,"colour":"red"})", "unknown key"},
      {R"({"channel":"gmail","sender":"1","text":"hi","must_escalate":false})", "can only be true"},
      {R"({"channel":"gmail","sender":"1","text":"hi","must_escalate":true,"history":[{"from":"agent","text":"x"}]})",
       "start with the customer"},
      {R"({"channel":"gmail","sender":"1","text":"hi","expected_action":"a","expected_fields":{"p":1}})", "string"},
      {R"({"channel":"gmail","sender":"1","text":"hi","must_escalate":true,"id":[[[[[[[[[1]]]]]]]]]})", "not JSON"},
  };
  for (const auto& [line, message] : bad) {
    const auto e = error_of(good + "\n" + line + "\n");
    INFO(line);
    CHECK(e.line == 2);
    CHECK_THAT(e.message, Catch::Contains(message));
  }
  CHECK(error_of("\n\n").message == "the set has no case");
}

TEST_CASE("eval scores a labelled set through the agent loop", "[replay][eval]") {
  Recorded r;
  const std::string set =
      R"({"id":"order","channel":"whatsapp","sender":"15551234567","text":"where is my order?",)"
      R"("expected_action":"send_message","expected_fields":{"priority":"medium","recipient":"15551234567"}})"
      "\n"
      R"({"id":"refund","channel":"whatsapp","sender":"15551234567","text":"I want my moneyback",)"
      R"("history":[{"from":"customer","text":"hello"},{"from":"agent","text":"hi, how can I help?"}],)"
      R"("must_escalate":true})"
      "\n"
      R"({"id":"open","channel":"gmail","sender":"15551234567","text":"is the shop open?",)"
      R"("expected_action":"send_message","expected_fields":{"priority":"high"}})"
      "\n";
  auto cases = replay::parse_set(set, k_eval_channels);
  REQUIRE(cases);
  const auto before = r.h.fake.request_count();
  auto report = replay::run_eval(*cases, r.options(), r.h.dir.file("eval.db"), test::source_path("migrations"));
  REQUIRE(report);
  REQUIRE(report->cases.size() == 3);
  CHECK(r.h.fake.request_count() - before == 3);
  // The history went into the model's context (cases run concurrently: found by their text).
  std::size_t with_history = 0;
  for (const auto& request : r.h.fake.requests())
    if (request.body.find("moneyback") != std::string::npos &&
        request.body.find("hi, how can I help?") != std::string::npos)
      ++with_history;
  CHECK(with_history == 1);
  CHECK(report->cases[0].correct);
  CHECK(report->cases[1].correct);
  CHECK_FALSE(report->cases[2].correct);  // the fake answers medium, not high
  CHECK(report->cases[2].wrong == std::vector<std::string>{"field priority"});
  CHECK(report->correct == 2);
  CHECK(report->accuracy == Approx(2.0 / 3));
  const auto field = [&](const std::string& name) {
    for (const auto& f : report->fields)
      if (f.name == name) return std::pair{f.right, f.total};
    return std::pair<std::int64_t, std::int64_t>{-1, -1};
  };
  CHECK(field("action") == std::pair<std::int64_t, std::int64_t>{2, 2});
  CHECK(field("priority") == std::pair<std::int64_t, std::int64_t>{1, 2});
  CHECK(field("must_escalate") == std::pair<std::int64_t, std::int64_t>{1, 1});
  const auto md = replay::eval_markdown(*report);
  CHECK_THAT(md, Catch::Contains("| accuracy | 66.7% |"));
  CHECK_THAT(md, Catch::Contains("| 3 | open | send\\_message |"));
  const auto json = test::parse_json(replay::eval_json(*report));
  CHECK(json["correct"].GetInt() == 2);
}

TEST_CASE("the shipped example eval sets parse", "[replay][eval]") {
  for (const char* path : {"catalog/examples/eval/support.es.jsonl", "catalog/examples/eval/support.en.jsonl"}) {
    INFO(path);
    auto set = replay::parse_set(test::read_file(test::source_path(path)), k_eval_channels);
    REQUIRE(set);
    CHECK(set->size() >= 10);
    CHECK(set->size() <= 20);
    CHECK(std::ranges::count_if(*set, [](const auto& c) { return c.must_escalate; }) >= 3);
  }
}
