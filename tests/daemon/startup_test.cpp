#include <catch2/catch.hpp>

#include <cstdlib>
#include <set>

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>

#include "connectors/whatsapp/section.h"
#include "connectors/whatsapp/webhook.h"
#include "daemon/startup.h"
#include "daemon/wiring.h"
#include "store/migrations.h"
#include "store/outbox.h"
#include "tests/fakes/fake_transport.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using test::k_t0;

namespace {

config::Config config_in(const test::TempDir& dir) {
  auto c = config::parse(R"({"catalog": ")" + test::source_path("catalog/examples/support.en.json") + R"(", )" +
                             test::database_config_keys(dir) + R"(, "migrations": {"dir": ")" +
                             test::source_path("migrations") +
                             R"("}, "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m",)"
                             R"( "api_key_env": "DISPATCHD_TEST_KEY"}})",
                         dir.file("dispatchd.json"));
  REQUIRE(c);
  return *c;
}

}  // namespace

TEST_CASE("start-up: migrations are applied at start, once", "[daemon]") {
  test::TempDir dir;
  const auto config = config_in(dir);
  {
    auto ready = daemon::prepare_store(config, "w", k_t0, {});
    REQUIRE(ready);
    CHECK_FALSE(ready->applied.empty());
    CHECK(ready->schema_version == store::schema_version(ready->db).value());
  }
  auto again = daemon::prepare_store(config, "w", k_t0 + 1s, {});
  REQUIRE(again);
  CHECK(again->applied.empty());
}

TEST_CASE("start-up: with apply_on_start off, a database behind the binary is refused", "[daemon]") {
  test::TempDir dir;
  auto config = config_in(dir);
  config.migrate_on_start = false;
  auto ready = daemon::prepare_store(config, "w", k_t0, {});
  REQUIRE_FALSE(ready);
  CHECK_THAT(ready.error(), Catch::Contains("run dispatchctl migrate"));
}

TEST_CASE("start-up: an interrupted send becomes unknown, and leases come back at once", "[daemon]") {
  test::TempDir dir;
  const auto config = config_in(dir);
  std::int64_t action = 0;
  {
    auto ready = daemon::prepare_store(config, "host-1", k_t0, {});
    REQUIRE(ready);
    auto& db = ready->db;
    auto message = store::insert_inbound(db, {"whatsapp", "wamid.1", "c1", "15551234567", "hola", "{}"}, k_t0);
    REQUIRE(message);
    REQUIRE(store::insert_inbound(db, {"whatsapp", "wamid.2", "c2", "15557654321", "hey", "{}"}, k_t0));
    auto added = store::add_action(db,
                                   {.message_id = message->id,
                                    .action = "send_message",
                                    .arguments = "{}",
                                    .recipient = "15551234567",
                                    .body = "hi"},
                                   k_t0);
    REQUIRE(added);
    action = *added;
    REQUIRE(store::begin_send(db, k_t0, "", "host-1").value());    // claimed by this instance
    REQUIRE(store::take_next(db, "host-1", k_t0, 3600s).value());  // leased for an hour, then "killed"
  }
  auto ready = daemon::prepare_store(config, "host-1", k_t0 + 10s, {});
  REQUIRE(ready);
  CHECK(ready->unknown_sends == std::vector<std::int64_t>{action});
  CHECK(test::query_int(ready->db, "SELECT count(*) FROM v_escalations WHERE reason = 'delivery_unknown'").value() ==
        1);
  auto taken = store::take_next(ready->db, "host-1", k_t0 + 11s, 60s);
  REQUIRE(taken);
  REQUIRE(*taken);
  CHECK((*taken)->conversation_id == "c1");  // taken again at once, not an hour later
}

TEST_CASE("check-config: missing secrets and a broken catalog are reported together", "[daemon]") {
  test::TempDir dir;
  auto config = config_in(dir);
  ::unsetenv("DISPATCHD_TEST_KEY");
  config.catalog = dir.file("missing.json");
  const auto problems = daemon::check_environment(config);
  REQUIRE(problems.size() == 2);
  CHECK_THAT(problems[0], Catch::StartsWith("catalog: "));
  CHECK_THAT(problems[1], Catch::Contains("llm.api_key_env: secret DISPATCHD_TEST_KEY is not set"));
  ::setenv("DISPATCHD_TEST_KEY", "k", 1);
  config = config_in(dir);
  CHECK(daemon::check_environment(config).empty());
  ::unsetenv("DISPATCHD_TEST_KEY");
}

TEST_CASE("check-config: a model rule for files a configured provider cannot read, as a table", "[daemon]") {
  struct Row {
    std::string provider;
    std::string fallback;  // "" for none
    std::string types;     // connectors.whatsapp.message_types
    std::vector<std::string> problems;
  };
  const std::string audio_openai =
      "connectors.whatsapp.message_types.audio: `model`, but the openai provider (llm.provider) cannot read audio "
      "files, so the model would see only the message's description: set the type to \"escalate\" or \"ignore\", "
      "or configure a provider that reads them (gemini), or transcribe it (media.transcription)";
  const std::vector<Row> rows = {
      {"openai", "", R"({"image": "model"})", {}},
      {"openai", "", R"({"image": "model", "audio": "model"})", {audio_openai}},
      {"openai", "", R"({"audio": "escalate", "document": "ignore"})", {}},
      {"gemini", "", R"({"image": "model", "audio": "model", "document": "model"})", {}},
      {"anthropic", "", R"({"image": "model", "document": "model"})", {}},
      {"anthropic",
       "",
       R"({"audio": "model"})",
       {"connectors.whatsapp.message_types.audio: `model`, but the anthropic provider (llm.provider) cannot read "
        "audio files, so the model would see only the message's description: set the type to \"escalate\" or "
        "\"ignore\", or configure a provider that reads them (gemini), or transcribe it (media.transcription)"}},
      {"gemini",
       "openai",
       R"({"document": "model"})",
       {"connectors.whatsapp.message_types.document: `model`, but the openai provider (llm.fallbacks/0) cannot read "
        "document files, so the model would see only the message's description: set the type to \"escalate\" or "
        "\"ignore\", or configure a provider that reads them (gemini or anthropic)"}},
      // Video has no reader, but its description is all a model rule ever gave it: not a problem.
      {"openai", "", R"({"video": "model", "sticker": "model"})", {}},
  };
  for (const auto& row : rows) {
    INFO(row.provider << " " << row.fallback << " " << row.types);
    test::TempDir dir;
    auto config = config_in(dir);
    config.llm.provider = row.provider;
    if (!row.fallback.empty()) config.llm.fallbacks.push_back({.provider = row.fallback});
    config.connectors["whatsapp"] = {R"({"enabled": true, "phone_number_id": "1", "access_token_env": "T",)"
                                     R"( "app_secret_env": "S", "verify_token_env": "V", "message_types": )" +
                                         row.types + "}",
                                     "/connectors/whatsapp"};
    const auto channels = connectors::configure(config);
    REQUIRE(channels);
    CHECK(daemon::check_model_media(config, *channels) == row.problems);
    // A channel that is not enabled answers nothing: its rules are not used.
    config.connectors["whatsapp"] = {R"({"message_types": )" + row.types + "}", "/connectors/whatsapp"};
    const auto disabled = connectors::configure(config);
    REQUIRE(disabled);
    CHECK(daemon::check_model_media(config, *disabled).empty());
  }
}

TEST_CASE("check-config: a model rule for audio needs no provider that reads audio once it is transcribed",
          "[daemon]") {
  test::TempDir dir;
  auto config = config_in(dir);
  config.connectors["whatsapp"] = {
      R"({"enabled": true, "phone_number_id": "1", "access_token_env": "T",)"
      R"( "app_secret_env": "S", "verify_token_env": "V", "message_types": {"audio": "model"}})",
      "/connectors/whatsapp"};
  auto channels = connectors::configure(config);
  REQUIRE(channels);
  const auto problems = daemon::check_model_media(config, *channels);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("or transcribe it (media.transcription)"));
  config.media.transcription = config::Transcription{};
  CHECK(daemon::check_model_media(config, *channels).empty());
  config.media.enabled = false;  // nothing is fetched, so nothing is transcribed
  CHECK(daemon::check_model_media(config, *channels).size() == 1);
}

TEST_CASE("wiring: the dialects a call may go to are the primary's and the fallbacks'", "[daemon]") {
  test::TempDir dir;
  auto config = config_in(dir);
  config.llm.fallbacks.push_back({.provider = "gemini"});
  const auto channels = connectors::configure(config);
  REQUIRE(channels);
  const auto settings = daemon::agent_settings(config, *channels, "w");
  CHECK(settings.model_dialects ==
        std::vector<llm::ProviderKind>{llm::ProviderKind::openai, llm::ProviderKind::gemini});
}

TEST_CASE("wiring: the provider's key comes from its variable, never from the file", "[daemon]") {
  test::TempDir dir;
  auto config = config_in(dir);
  boost::asio::io_context io;
  fakes::FakeTransport transport(io);
  llm::Limiter limiter(io, 2);
  ::unsetenv("DISPATCHD_TEST_KEY");
  auto missing = daemon::build_provider(config.llm, transport, io, limiter, std::chrono::seconds(30), {});
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error(), Catch::Contains("DISPATCHD_TEST_KEY is not set"));
  ::setenv("DISPATCHD_TEST_KEY", "sk-from-env", 1);
  auto provider = daemon::build_provider(config.llm, transport, io, limiter, std::chrono::seconds(30), {});
  ::unsetenv("DISPATCHD_TEST_KEY");
  REQUIRE(provider);
  transport.push_response(401, R"({"error":{"message":"bad key"}})");  // a client error: not retried
  provider->provider->complete({"", {{llm::Role::user, "hi"}}, llm::output_schema(test::support_en())},
                               [](llm::CompletionResult) {});
  io.run();
  REQUIRE(transport.requests().size() == 1);
  CHECK(transport.requests()[0].url == "http://127.0.0.1:9/v1/chat/completions");
  CHECK(transport.requests()[0].headers.get("Authorization") == "Bearer sk-from-env");
  CHECK(transport.requests()[0].body.find("prompt_cache_key") == std::string::npos);  // llm.prompt_cache_key's default
  const auto channels = connectors::configure(config);
  REQUIRE(channels);
  const auto settings = daemon::agent_settings(config, *channels, "w");
  CHECK(settings.max_retries == 2);
  CHECK(settings.lease >= std::chrono::seconds(900));
}

TEST_CASE("wiring: llm.prompt_cache_key reaches the provider's requests", "[daemon]") {
  test::TempDir dir;
  auto config = config_in(dir);
  config.llm.prompt_cache_key = true;
  boost::asio::io_context io;
  fakes::FakeTransport transport(io);
  llm::Limiter limiter(io, 2);
  ::setenv("DISPATCHD_TEST_KEY", "sk-from-env", 1);
  auto provider = daemon::build_provider(config.llm, transport, io, limiter, std::chrono::seconds(30), {});
  ::unsetenv("DISPATCHD_TEST_KEY");
  REQUIRE(provider);
  transport.push_response(401, R"({"error":{"message":"bad key"}})");
  provider->provider->complete({"", {{llm::Role::user, "hi"}}, llm::output_schema(test::support_en())},
                               [](llm::CompletionResult) {});
  io.run();
  REQUIRE_FALSE(transport.requests().empty());
  CHECK_THAT(transport.requests()[0].body, Catch::Contains(R"("prompt_cache_key":"dispatchd-)"));
}

TEST_CASE("wiring: connectors.whatsapp.message_types become the agent's rules for every type the connector names",
          "[daemon]") {
  test::TempDir dir;
  auto config = config_in(dir);
  config.connectors["whatsapp"] = {R"({"message_types": {"location": {"reply": "Recibido."}}})",
                                   "/connectors/whatsapp"};
  const auto channels = connectors::configure(config);
  REQUIRE(channels);
  const auto settings = daemon::agent_settings(config, *channels, "w");
  const auto& rules = settings.type_rules.at("whatsapp");
  // The config's list of types is the connector's: every kind it stores has a rule.
  std::set<std::string> kinds;
  for (int k = 0; k <= static_cast<int>(whatsapp::MessageKind::unknown); ++k)
    kinds.insert(whatsapp::to_string(static_cast<whatsapp::MessageKind>(k)));
  std::set<std::string> configured;
  for (const auto& [type, _] : whatsapp::default_types()) configured.insert(type);
  CHECK(kinds == configured);
  CHECK(rules.size() == kinds.size());
  CHECK(rules.at("text").action == agent::TypeAction::model);
  CHECK(rules.at("image").action == agent::TypeAction::escalate);
  CHECK(rules.at("reaction").action == agent::TypeAction::ignore);
  CHECK(rules.at("location").action == agent::TypeAction::reply);
  CHECK(rules.at("location").reply_text == "Recibido.");
}

TEST_CASE("start-up: the open files limit asked for, as a table", "[daemon]") {
  struct Row {
    std::uint64_t soft, hard, needed, target;
  };
  for (const auto& r : {Row{1024, 524288, 2900, 2900},    // systemd's default: raised to what is needed
                        Row{1024, 2048, 2900, 2048},      // the hard limit is the ceiling
                        Row{65536, 524288, 2900, 65536},  // already enough: never lowered
                        Row{1024, 1024, 2900, 1024}}) {
    CAPTURE(r.soft, r.hard, r.needed);
    CHECK(daemon::open_files_target(r.soft, r.hard, r.needed) == r.target);
  }
}

TEST_CASE("start-up: the descriptors a configuration needs grow with llm.max_concurrency", "[daemon]") {
  config::Config small;
  small.llm.max_concurrency = 8;
  config::Config large = small;
  large.llm.max_concurrency = 2000;
  CHECK(daemon::open_files_needed(large) - daemon::open_files_needed(small) == 1992);
  CHECK(daemon::open_files_needed(small) >= 512 + 8);  // every listener connection besides the model's
}
