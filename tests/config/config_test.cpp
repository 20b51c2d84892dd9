#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>

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
  CHECK(c->whatsapp.enabled);
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
  CHECK_FALSE(c->whatsapp.enabled);
  CHECK_FALSE(c->migrations_dir.empty());
}

TEST_CASE("config: every problem is reported with its pointer", "[config]") {
  const std::string text = R"({
    "catalgo": "x.json",
    "http": {"listen": "8080"},
    "llm": {"provider": "openia", "base_url": "api.openai.com", "model": "", "api_key_env": "K", "max_retries": 9},
    "connectors": {"whatsapp": {"enabled": true}}
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
  CHECK(any_contains(p, "/connectors/whatsapp/app_secret_env: is required when whatsapp is enabled"));
}

TEST_CASE("config: not JSON is one clear problem", "[config]") {
  auto c = config::parse("{\"catalog\": ", "d.json");
  REQUIRE_FALSE(c);
  CHECK_THAT(c.error().front(), Catch::StartsWith("d.json: offset"));
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
