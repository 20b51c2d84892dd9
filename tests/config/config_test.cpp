#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "config/config.h"
#include "config/secrets.h"
#include "tests/store/temp_dir.h"
#include "tests/test_util.h"

using namespace dispatchd;

namespace {

constexpr const char* k_minimal = R"({
  "catalog": "catalog.json",
  "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9000/v1", "model": "m", "api_key_env": "K"}
})";

bool any_contains(const std::vector<std::string>& problems, const std::string& needle) {
  return std::any_of(problems.begin(), problems.end(),
                     [&](const std::string& p) { return p.find(needle) != std::string::npos; });
}

}  // namespace

TEST_CASE("config: the shipped example loads", "[config]") {
  auto c = config::load(test::source_path("config/examples/dispatchd.json"));
  if (!c) FAIL(c.error().front());
  CHECK(c->llm.provider == "openai");
  CHECK(c->llm.max_retries == 2);
  CHECK(c->llm.prompt_cache_key);             // the example is api.openai.com's
  CHECK(c->connectors.contains("whatsapp"));  // read by the channel (tests/connectors/registry_test.cpp)
  CHECK(c->http.host == "127.0.0.1");
  CHECK(c->http.port == 8080);
  CHECK(c->holding_reply.has_value());
}

TEST_CASE("config: defaults, and relative paths resolve against the file's folder", "[config]") {
  auto c = config::parse(k_minimal, "/etc/dispatchd/dispatchd.json");
  REQUIRE(c);
  CHECK(c->catalog == "/etc/dispatchd/catalog.json");
  CHECK(c->database == "/var/lib/dispatchd/dispatchd.db");
  CHECK(c->migrate_on_start);
  CHECK(c->llm.max_retries == 2);
  CHECK(c->llm.timeout_ms == 30000);
  CHECK(c->connectors.empty());
  CHECK_FALSE(c->migrations_dir.empty());
}

TEST_CASE("config: every problem is reported with its pointer", "[config]") {
  const std::string text = R"({
    "catalgo": "x.json",
    "http": {"listen": "8080"},
    "llm": {"provider": "openia", "base_url": "api.openai.com", "model": "", "api_key_env": "K", "max_retries": 9},
    "connectors": {"whatsapp": {"enabled": true}, "sms": 3}
  })";
  auto c = config::parse(text, "d.json");
  REQUIRE_FALSE(c);
  const auto& p = c.error();
  CAPTURE(p);
  CHECK(any_contains(p, "d.json: /catalgo: unknown key"));
  CHECK(any_contains(p, "/catalog: is required"));
  CHECK(any_contains(p, "/http/listen: must be HOST:PORT"));
  CHECK(any_contains(p, "/llm/provider: must be \"openai\", \"gemini\" or \"anthropic\""));
  CHECK(any_contains(p, "/llm/base_url: must be an http:// or https:// URL"));
  CHECK(any_contains(p, "/llm/model: is required"));
  CHECK(any_contains(p, "/llm/max_retries: must be an integer from 0 to 5"));
  // The channels' sections are their own (tests/connectors/registry_test.cpp): config/ keeps them.
  CHECK_FALSE(any_contains(p, "/connectors/"));
  int asked = 0;
  auto with_sections = config::parse(text, "d.json", [&](const config::Config& read) {
    ++asked;
    CHECK(read.connectors.at("sms").json == "3");
    return std::vector<std::string>{"d.json: /connectors/sms: a section's problem"};
  });
  REQUIRE_FALSE(with_sections);
  CHECK(asked == 1);
  CHECK(with_sections.error().back() == "d.json: /connectors/sms: a section's problem");
}

TEST_CASE("config: http.listen's port is the whole rest after the last colon", "[config]") {
  for (const std::string listen : {"127.0.0.1:8,80", "127.0.0.1:80abc", "127.0.0.1:", "127.0.0.1:+80", "[::1]:70000"}) {
    CAPTURE(listen);
    const auto c = config::parse(R"({"catalog": "c.json", "http": {"listen": ")" + listen + R"("},
      "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9000/v1", "model": "m", "api_key_env": "K"}})",
                                 "d.json");
    REQUIRE_FALSE(c);
    CHECK(any_contains(c.error(), "/http/listen: must be HOST:PORT"));
  }
  const auto ok = config::parse(R"({"catalog": "c.json", "http": {"listen": "[::1]:8081"},
    "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9000/v1", "model": "m", "api_key_env": "K"}})",
                                "d.json");
  REQUIRE(ok);
  CHECK(ok->http.host == "[::1]");
  CHECK(ok->http.port == 8081);
}

TEST_CASE("config: not JSON is one clear problem", "[config]") {
  auto c = config::parse("{\"catalog\": ", "d.json");
  REQUIRE_FALSE(c);
  CHECK_THAT(c.error().front(), Catch::StartsWith("d.json: offset"));
}

TEST_CASE("config: comments and trailing commas are allowed, a duplicate key is not", "[config]") {
  auto annotated = config::parse(R"({
    // the catalog next to this file
    "catalog": "catalog.json", /* block */
    "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9000/v1", "model": "m", "api_key_env": "K",},
  })",
                                 "d.json");
  if (!annotated) FAIL(annotated.error().front());
  CHECK(annotated->llm.model == "m");
  // Which of two values was meant is not guessed: the file is refused, with where.
  auto twice = config::parse(R"({"catalog": "a.json", "catalog": "b.json",
    "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9000/v1", "model": "m", "api_key_env": "K"}})",
                             "d.json");
  REQUIRE_FALSE(twice);
  CHECK_THAT(twice.error().front(), Catch::StartsWith("d.json: offset"));
  CHECK(any_contains(twice.error(), "duplicate key \"catalog\""));
}

TEST_CASE("secrets: from the environment, else from $CREDENTIALS_DIRECTORY, never echoed", "[config]") {
  test::TempDir dir;
  ::setenv("DISPATCHD_TEST_SECRET", "s3cret", 1);
  CHECK(config::read_secret("DISPATCHD_TEST_SECRET").value() == "s3cret");
  ::unsetenv("DISPATCHD_TEST_SECRET");
  {
    std::ofstream out(dir.file("DISPATCHD_TEST_SECRET"));
    out << "from-file\n";
  }
  ::setenv("CREDENTIALS_DIRECTORY", dir.path().c_str(), 1);
  CHECK(config::read_secret("DISPATCHD_TEST_SECRET").value() == "from-file");
  ::unsetenv("CREDENTIALS_DIRECTORY");
  auto missing = config::read_secret("DISPATCHD_TEST_SECRET");
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error(), Catch::Contains("DISPATCHD_TEST_SECRET is not set"));
}

TEST_CASE("config: a channel's section is kept as written for the channel to read", "[config]") {
  std::string text = k_minimal;
  text.insert(text.rfind('}'),
              R"(, "connectors": {"$comment": "x", "whatsapp": {"enabled": true, /* c */ "a": [1, 2]}})");
  auto c = config::parse(text, "d.json");
  if (!c) FAIL(c.error().front());
  REQUIRE(c->connectors.size() == 1);
  CHECK(c->connectors.at("whatsapp").json == R"({"enabled":true,"a":[1,2]})");
  CHECK(c->connectors.at("whatsapp").at == "/connectors/whatsapp");
}

TEST_CASE("config: staff sessions and the claim idle limit have defaults and bounds", "[config]") {
  auto defaults = config::parse(k_minimal, "d.json");
  REQUIRE(defaults);
  CHECK_FALSE(defaults->staff.secure_cookies);
  CHECK(defaults->staff.session_idle_minutes == 60);
  CHECK(defaults->staff.session_max_hours == 12);
  CHECK(defaults->staff.claim_idle_minutes == 30);
  auto set = config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
    "model": "m", "api_key_env": "K"}, "staff": {"secure_cookies": true, "session_idle_minutes": 15,
    "session_max_hours": 8, "claim_idle_minutes": 5}})",
                           "d.json");
  REQUIRE(set);
  CHECK(set->staff.secure_cookies);
  CHECK(set->staff.session_idle_minutes == 15);
  CHECK(set->staff.session_max_hours == 8);
  CHECK(set->staff.claim_idle_minutes == 5);
  auto bad = config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
    "model": "m", "api_key_env": "K"}, "staff": {"session_idle_minutes": 0, "session_max_hours": 1000,
    "claim_idle_minutes": 0}})",
                           "d.json");
  REQUIRE_FALSE(bad);
  CHECK(any_contains(bad.error(), "/staff/session_idle_minutes: must be an integer from 1 to 10080"));
  CHECK(any_contains(bad.error(), "/staff/session_max_hours: must be an integer from 1 to 720"));
  CHECK(any_contains(bad.error(), "/staff/claim_idle_minutes: must be an integer from 1 to 10080"));
}

TEST_CASE("config: staff.response_target_minutes by reason, with a default", "[config][targets]") {
  const auto with = [](const std::string& targets) {
    return config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
      "model": "m", "api_key_env": "K"}, "staff": {"response_target_minutes": )" +
                             targets + "}}",
                         "d.json");
  };
  auto defaults = config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai",
    "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "K"}})",
                                "d.json");
  REQUIRE(defaults);
  CHECK(defaults->staff.response_target_default_minutes == 60);
  CHECK(defaults->staff.response_target_minutes.empty());

  auto set = with(R"({"default": 240, "needs_approval": 15, "send_failed": 30})");
  REQUIRE(set);
  CHECK(set->staff.response_target_default_minutes == 240);
  CHECK(set->staff.response_target_minutes == std::map<std::string, int>{{"needs_approval", 15}, {"send_failed", 30}});

  auto bad = with(R"({"default": 0, "needs_aproval": 15, "send_failed": -3, "model_escalated": "10"})");
  REQUIRE_FALSE(bad);
  CHECK(any_contains(bad.error(), "/staff/response_target_minutes/default: must be an integer from 1 to 10080"));
  CHECK(any_contains(bad.error(), "/staff/response_target_minutes/needs_aproval: unknown escalation reason"));
  CHECK(any_contains(bad.error(), "/staff/response_target_minutes/send_failed: must be an integer from 1 to 10080"));
  CHECK(any_contains(bad.error(), "/staff/response_target_minutes/model_escalated: must be an integer"));
  auto not_object = with("30");
  REQUIRE_FALSE(not_object);
  CHECK(any_contains(not_object.error(), "/staff/response_target_minutes: must be an object"));
}

TEST_CASE("config: escalation notifications and the staff page's public URL", "[config]") {
  const auto with = [](const std::string& members) {
    return config::parse(R"({"catalog": "c.json", "http": {"listen": "127.0.0.1:8099"},
      "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9000/v1", "model": "m", "api_key_env": "K"})" +
                             members + "}",
                         "/etc/dispatchd/dispatchd.json");
  };
  SECTION("defaults: no notifications; links to http.listen") {
    auto c = with("");
    REQUIRE(c);
    CHECK_FALSE(c->notify_url.has_value());
    CHECK(c->notify_timeout_ms == 5000);
    CHECK(c->staff_public_url == "http://127.0.0.1:8099");
    CHECK(c->retention_days == 0);  // no retention period
  }
  SECTION("set") {
    auto c = with(R"(, "escalation": {"notify_url": "https://hooks.example.com/services/T0/B0/x",
                                      "notify_timeout_ms": 2000},
                     "staff": {"public_url": "https://support.example.com/"}, "retention": {"days": 90})");
    REQUIRE(c);
    CHECK(c->retention_days == 90);
    CHECK(c->notify_url == "https://hooks.example.com/services/T0/B0/x");
    CHECK(c->notify_timeout_ms == 2000);
    CHECK(c->staff_public_url == "https://support.example.com");  // no trailing '/'
  }
  SECTION("refused with a clear problem") {
    for (const char* bad : {R"("ftp://hooks.example.com")", R"("hooks.example.com/x")", R"("https://")",
                            R"("https:///path")", R"("https://hooks.example.com/a b")", "42"}) {
      CAPTURE(bad);
      auto c = with(std::string(R"(, "escalation": {"notify_url": )") + bad + "}");
      REQUIRE_FALSE(c);
      CHECK(any_contains(c.error(), "/escalation/notify_url: must be"));
    }
    auto timeout = with(R"(, "escalation": {"notify_timeout_ms": 0})");
    REQUIRE_FALSE(timeout);
    CHECK(any_contains(timeout.error(), "/escalation/notify_timeout_ms: must be an integer from 100 to 60000"));
    auto retention = with(R"(, "retention": {"days": 0})");
    REQUIRE_FALSE(retention);
    CHECK(any_contains(retention.error(), "/retention/days: must be an integer from 1 to 36500"));
    auto page = with(R"(, "staff": {"public_url": "support.example.com"})");
    REQUIRE_FALSE(page);
    CHECK(any_contains(page.error(), "/staff/public_url: must be an http:// or https:// URL"));
  }
}

TEST_CASE("config: the listener's per-address connection cap", "[config]") {
  auto defaults = config::parse(k_minimal, "d.json");
  REQUIRE(defaults);
  CHECK(defaults->http.max_connections_per_address == 64);
  auto bad = config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
    "model": "m", "api_key_env": "K"}, "http": {"max_connections_per_address": 0}})",
                           "d.json");
  REQUIRE_FALSE(bad);
  CHECK(any_contains(bad.error(), "/http/max_connections_per_address: must be an integer from 1 to 512"));
}

TEST_CASE("config: the group commit's interval", "[config]") {
  auto defaults = config::parse(k_minimal, "d.json");
  REQUIRE(defaults);
  CHECK(defaults->database_commit_interval_ms == 5);
  const auto with = [](const std::string& value) {
    return config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
      "model": "m", "api_key_env": "K"}, "database_commit_interval_ms": )" +
                             value + "}",
                         "d.json");
  };
  auto off = with("0");
  REQUIRE(off);
  CHECK(off->database_commit_interval_ms == 0);
  for (const auto* bad : {"-1", "101", "2.5", "\"5\""}) {
    auto refused = with(bad);
    REQUIRE_FALSE(refused);
    CHECK(any_contains(refused.error(), "/database_commit_interval_ms: must be an integer from 0 to 100"));
  }
}

TEST_CASE("config: http.listener_thread is auto, own or loop", "[config]") {
  auto defaults = config::parse(k_minimal, "d.json");
  REQUIRE(defaults);
  CHECK(defaults->http.listener_thread == config::ListenerThread::automatic);
  const auto with = [](const std::string& value) {
    return config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
      "model": "m", "api_key_env": "K"}, "http": {"listener_thread": ")" +
                             value + "\"}}",
                         "d.json");
  };
  const std::pair<const char*, config::ListenerThread> rows[] = {{"auto", config::ListenerThread::automatic},
                                                                 {"own", config::ListenerThread::own},
                                                                 {"loop", config::ListenerThread::loop}};
  for (const auto& [value, expected] : rows) {
    auto parsed = with(value);
    REQUIRE(parsed);
    CHECK(parsed->http.listener_thread == expected);
  }
  for (const char* bad : {"thread", "", "OWN"}) {
    INFO(bad);
    auto refused = with(bad);
    REQUIRE_FALSE(refused);
    CHECK(any_contains(refused.error(), "/http/listener_thread: must be \"auto\", \"own\" or \"loop\""));
  }
}

TEST_CASE("config: llm.max_concurrency reaches 4,096 (latency-bound loads), not beyond", "[config]") {
  const auto with = [](int n) {
    return config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
      "model": "m", "api_key_env": "K", "max_concurrency": )" +
                             std::to_string(n) + "}}",
                         "d.json");
  };
  auto most = with(4096);
  REQUIRE(most);
  CHECK(most->llm.max_concurrency == 4096);
  auto beyond = with(4097);
  REQUIRE_FALSE(beyond);
  CHECK(any_contains(beyond.error(), "/llm/max_concurrency: must be an integer from 1 to 4096"));
}

TEST_CASE("config: bursts default to 1.5 s quiet within 6 s, and the max is never below the quiet time", "[config]") {
  auto defaults = config::parse(k_minimal, "d.json");
  REQUIRE(defaults);
  CHECK(defaults->agent.burst_quiet_ms == 1500);
  CHECK(defaults->agent.burst_max_ms == 6000);
  const auto with_agent = [](const std::string& agent) {
    std::string text = k_minimal;
    text.insert(text.rfind('}'), R"(, "agent": )" + agent);
    return config::parse(text, "d.json");
  };
  struct Row {
    const char* agent;
    const char* problem;  // "" for none
  };
  const Row rows[] = {
      {R"({"burst_quiet_ms": 0})", ""},
      {R"({"burst_quiet_ms": 0, "burst_max_ms": 0})", ""},
      {R"({"burst_quiet_ms": 3000, "burst_max_ms": 3000})", ""},
      {R"({"burst_quiet_ms": 8000})", "/agent/burst_max_ms: must be at least agent.burst_quiet_ms (8000)"},
      {R"({"burst_quiet_ms": -1})", "/agent/burst_quiet_ms: must be an integer from 0 to 60000"},
      {R"({"burst_max_ms": 600001})", "/agent/burst_max_ms: must be an integer from 0 to 600000"},
      {R"({"burst_quiet": 10})", "/agent/burst_quiet: unknown key"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.agent);
    auto c = with_agent(row.agent);
    if (std::string(row.problem).empty()) {
      CHECK(c);
    } else {
      REQUIRE_FALSE(c);
      CAPTURE(c.error());
      CHECK(any_contains(c.error(), row.problem));
    }
  }
}

TEST_CASE("config: llm.prompt_cache_key is off by default and for provider openai only", "[config]") {
  const auto with = [](const std::string& provider, const std::string& value) {
    return config::parse(R"({"catalog": "c.json", "llm": {"provider": ")" + provider +
                             R"(", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "K",
      "prompt_cache_key": )" +
                             value + "}}",
                         "d.json");
  };
  auto defaults = config::parse(k_minimal, "d.json");
  REQUIRE(defaults);
  CHECK_FALSE(defaults->llm.prompt_cache_key);
  auto on = with("openai", "true");
  REQUIRE(on);
  CHECK(on->llm.prompt_cache_key);
  auto off = with("anthropic", "false");
  REQUIRE(off);
  CHECK_FALSE(off->llm.prompt_cache_key);
  for (const char* provider : {"gemini", "anthropic"}) {
    INFO(provider);
    auto refused = with(provider, "true");
    REQUIRE_FALSE(refused);
    CHECK(any_contains(refused.error(), "/llm/prompt_cache_key: is for provider openai"));
  }
  auto not_bool = with("openai", "\"yes\"");
  REQUIRE_FALSE(not_bool);
  CHECK(any_contains(not_bool.error(), "/llm/prompt_cache_key: must be true or false"));
}

TEST_CASE("config: llm.breaker's defaults, and what it refuses", "[config]") {
  const auto with = [](const std::string& breaker) {
    return config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
      "model": "m", "api_key_env": "K", "breaker": )" +
                             breaker + "}}",
                         "d.json");
  };
  auto defaults = config::parse(k_minimal, "d.json");
  REQUIRE(defaults);
  CHECK(defaults->llm.breaker.failures == 5);
  CHECK(defaults->llm.breaker.probe_min_ms == 1000);
  CHECK(defaults->llm.breaker.probe_max_ms == 5000);
  auto set = with(R"({"failures": 3, "probe_min_ms": 500, "probe_max_ms": 2000})");
  REQUIRE(set);
  CHECK(set->llm.breaker.failures == 3);
  CHECK(set->llm.breaker.probe_max_ms == 2000);
  struct Row {
    const char* breaker;
    const char* error;
  };
  const Row rows[] = {
      {R"({"failures": 0})", "/llm/breaker/failures: must be an integer from 1 to 1000"},
      {R"({"probe_min_ms": 50})", "/llm/breaker/probe_min_ms: must be an integer from 100 to 600000"},
      {R"({"probe_min_ms": 3000, "probe_max_ms": 2000})", "/llm/breaker/probe_max_ms: must be at least probe_min_ms"},
      {R"({"probes": 2})", "/llm/breaker/probes: unknown key"},
      {R"("fast")", "/llm/breaker: must be an object"},
  };
  for (const auto& row : rows) {
    INFO(row.breaker);
    auto refused = with(row.breaker);
    REQUIRE_FALSE(refused);
    CHECK(any_contains(refused.error(), row.error));
  }
}

TEST_CASE("config: media.transcription is off when absent, and needs a URL, a model and a key", "[config]") {
  const auto with = [](const std::string& transcription) {
    return config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
      "model": "m", "api_key_env": "K"}, "media": {"transcription": )" +
                             transcription + "}}",
                         "d.json");
  };
  auto defaults = config::parse(k_minimal, "d.json");
  REQUIRE(defaults);
  CHECK_FALSE(defaults->media.transcription.has_value());
  auto on = with(R"({"base_url": "https://api.openai.com/v1/", "model": "whisper-1", "api_key_env": "STT_KEY"})");
  REQUIRE(on);
  REQUIRE(on->media.transcription.has_value());
  CHECK(on->media.transcription->base_url == "https://api.openai.com/v1/");
  CHECK(on->media.transcription->model == "whisper-1");
  CHECK(on->media.transcription->api_key_env == "STT_KEY");
  CHECK(on->media.transcription->timeout_ms == 60'000);
  CHECK(on->media.transcription->attempts == 5);
  auto empty = with("{}");
  REQUIRE_FALSE(empty);
  CHECK(any_contains(empty.error(), "/media/transcription/base_url: must be an http:// or https:// URL"));
  CHECK(any_contains(empty.error(), "/media/transcription/model: is required"));
  CHECK(any_contains(empty.error(), "/media/transcription/api_key_env: is required"));
  auto bounds = with(R"({"base_url": "http://127.0.0.1:9/v1", "model": "w", "api_key_env": "K", "attempts": 0,
    "timeout_ms": 10})");
  REQUIRE_FALSE(bounds);
  CHECK(any_contains(bounds.error(), "/media/transcription/attempts"));
  CHECK(any_contains(bounds.error(), "/media/transcription/timeout_ms"));
  auto unknown = with(R"({"base_url": "http://127.0.0.1:9/v1", "model": "w", "api_key_env": "K", "api_key": "sk"})");
  REQUIRE_FALSE(unknown);
  CHECK(any_contains(unknown.error(), "/media/transcription/api_key"));
}
