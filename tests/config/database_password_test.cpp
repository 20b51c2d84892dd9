#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "config/config.h"
#include "config/database_password.h"
#include "tests/store/temp_dir.h"

using namespace dispatchd;
using config::PasswordErrorKind;
using config::PasswordSource;

namespace {

constexpr const char* k_uri = "postgresql://dispatchd@127.0.0.1:5432/dispatchd";

// A fake environment: the variables given, nothing else.
config::PasswordSources sources(std::map<std::string, std::string> env, std::optional<std::string> credentials_dir) {
  config::PasswordSources s;
  s.getenv = [env = std::move(env)](const std::string& name) -> std::optional<std::string> {
    const auto found = env.find(name);
    if (found == env.end()) return std::nullopt;
    return found->second;
  };
  s.credentials_dir = std::move(credentials_dir);
  return s;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string config_text(const std::string& database, const std::string& password_env) {
  return R"({"database": ")" + database + R"(",)" +
         (password_env.empty() ? "" : R"("database_password_env": ")" + password_env + R"(",)") +
         R"("catalog": "c.json",
            "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "K"}})";
}

}  // namespace

TEST_CASE("database password: credential, then the named variable, then libpq's own", "[config][password]") {
  test::TempDir creds;
  write(creds.file("database_password"), "from-credential\n");
  test::TempDir empty_creds;
  struct Row {
    const char* name;
    std::map<std::string, std::string> env;
    std::optional<std::string> credentials_dir;
    std::string password_env;
    PasswordSource source;
    std::string value;
  };
  const Row rows[] = {
      {"the credential wins over the variable",
       {{"PGPW", "from-env"}},
       creds.path().string(),
       "PGPW",
       PasswordSource::credential,
       "from-credential"},
      {"the credential without a variable named",
       {},
       creds.path().string(),
       "",
       PasswordSource::credential,
       "from-credential"},
      {"the credential, the named variable unset",
       {},
       creds.path().string(),
       "PGPW",
       PasswordSource::credential,
       "from-credential"},
      {"the named variable, no credentials folder",
       {{"PGPW", "from-env"}},
       std::nullopt,
       "PGPW",
       PasswordSource::environment,
       "from-env"},
      {"the named variable, a folder without the credential",
       {{"PGPW", "from-env"}},
       empty_creds.path().string(),
       "PGPW",
       PasswordSource::environment,
       "from-env"},
      {"none: libpq reads PGPASSWORD itself",
       {{"PGPASSWORD", "libpq-reads-it"}},
       std::nullopt,
       "",
       PasswordSource::none,
       ""},
  };
  for (const auto& row : rows) {
    SECTION(row.name) {
      const auto got =
          config::resolve_database_password(k_uri, row.password_env, sources(row.env, row.credentials_dir));
      REQUIRE(got);
      CHECK(got->source == row.source);
      CHECK(got->value == row.value);
      CHECK(config::describe(*got).find(row.value.empty() ? "PGPASSWORD" : got->origin) != std::string::npos);
    }
  }
}

TEST_CASE("database password: a named variable that is unset is an error naming it, not a fall-through",
          "[config][password]") {
  for (const auto& env : {std::map<std::string, std::string>{}, std::map<std::string, std::string>{{"PGPW", ""}}}) {
    const auto got = config::resolve_database_password(k_uri, "PGPW", sources(env, std::nullopt));
    REQUIRE_FALSE(got);
    CHECK(got.error().kind == PasswordErrorKind::env_unset);
    CHECK(got.error().message.find("PGPW") != std::string::npos);
  }
}

TEST_CASE("database password: an empty, oversized or unreadable credential is an error, never another password",
          "[config][password]") {
  test::TempDir creds;
  SECTION("empty") { write(creds.file("database_password"), "\n"); }
  SECTION("oversized") { write(creds.file("database_password"), std::string(config::k_max_password_bytes + 1, 'x')); }
  SECTION("a folder, not a file") { std::filesystem::create_directory(creds.file("database_password")); }
  const auto got =
      config::resolve_database_password(k_uri, "PGPW", sources({{"PGPW", "secret-env"}}, creds.path().string()));
  REQUIRE_FALSE(got);
  CHECK(got.error().kind == PasswordErrorKind::unreadable);
  CHECK(got.error().message.find("database_password") != std::string::npos);
  CHECK(got.error().message.find("secret-env") == std::string::npos);
}

TEST_CASE("database password: SQLite needs none and looks nowhere", "[config][password]") {
  test::TempDir creds;
  write(creds.file("database_password"), "unused");
  const auto got =
      config::resolve_database_password("/var/lib/dispatchd/dispatchd.db", "", sources({}, creds.path().string()));
  REQUIRE(got);
  CHECK(got->source == PasswordSource::none);
  CHECK(got->value.empty());
}

TEST_CASE("database password: a URI that holds one is found", "[config][password]") {
  for (const char* uri : {"postgresql://u:secret@h/db", "postgres://u:@h:5432/db", "postgresql://h/db?password=x",
                          "postgresql://u@h/db?sslmode=require&password=x", "postgresql://u:p@h1:1,h2:2/db"}) {
    CAPTURE(uri);
    CHECK(config::uri_has_password(uri));
  }
  for (const char* uri : {"postgresql://u@h:5432/db", "postgresql://h/db", "postgresql://u@h/db?passfile=/x&sslmode=a",
                          "postgresql://h:5432/db?options=a:b@c", "postgresql:///db?host=/run/postgresql"}) {
    CAPTURE(uri);
    CHECK_FALSE(config::uri_has_password(uri));
  }
}

TEST_CASE("config: a database URI with a password is refused without repeating it", "[config][password]") {
  const auto c = config::parse(config_text("postgresql://dispatchd:hunter2@127.0.0.1/dispatchd", ""), "/etc/d.json");
  REQUIRE_FALSE(c);
  REQUIRE(c.error().size() == 1);
  CHECK(c.error().front().find("/database: holds a password") != std::string::npos);
  CHECK(c.error().front().find("may be logged or shown") != std::string::npos);
  CHECK(c.error().front().find("hunter2") == std::string::npos);
}

TEST_CASE("config: a database URI is kept as given, with database_password_env", "[config][password]") {
  const auto c = config::parse(config_text(k_uri, "DISPATCHD_DB_PASSWORD"), "/etc/dispatchd/d.json");
  if (!c) FAIL(c.error().front());
  CHECK(c->database == k_uri);  // not resolved against the file's folder like a path
  CHECK(c->database_password_env == "DISPATCHD_DB_PASSWORD");
  const auto sqlite = config::parse(config_text("d.db", ""), "/etc/dispatchd/d.json");
  REQUIRE(sqlite);
  CHECK(sqlite->database == "/etc/dispatchd/d.db");
  CHECK(sqlite->database_password_env.empty());
}

TEST_CASE("config: database_password_env with a SQLite file is a mistake", "[config][password]") {
  const auto c = config::parse(config_text("d.db", "PGPW"), "/etc/d.json");
  REQUIRE_FALSE(c);
  CHECK(c.error().front().find("/database_password_env: is for a postgresql:// database") != std::string::npos);
}
