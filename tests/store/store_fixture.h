#pragma once
// A migrated database for store tests, on the backend the run asks for:
//   default                              a SQLite file, `dir`/d.db
//   DISPATCHD_TEST_BACKEND=postgresql    a PostgreSQL database of the test's own on the
//                                        server DISPATCHD_TEST_POSTGRESQL_DIR names (its
//                                        files `uri` and `password`, tests/postgresql/cluster.sh)
// One database per TempDir: every open_db(dir) reaches the same data, as every open of
// dir/d.db does. A PostgreSQL database is created on the first open and dropped once its
// TempDir is gone (checked at the next creation) or at process exit.

#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/dialect.h"
#include "store/inbox.h"
#include "store/migrations.h"
#include "store/tools/backup.h"
#include "tests/store/temp_dir.h"
#include "tests/support/raw_sql.h"
#include "tests/test_util.h"

namespace dispatchd::test {

inline const store::Time k_t0 = std::chrono::sys_days{std::chrono::November / 30 / 2026} + std::chrono::hours(12);

// The PostgreSQL server of a DISPATCHD_TEST_BACKEND=postgresql run, and the databases this
// process made on it.
class PostgresqlTestServer {
 public:
  // Null unless the run is on PostgreSQL; a run that asks for it without a server fails.
  static PostgresqlTestServer* get() {
    static std::optional<PostgresqlTestServer> server = make();
    return server ? &*server : nullptr;
  }

  PostgresqlTestServer(std::string uri, std::string password)
      : m_uri(std::move(uri)), m_password(std::move(password)) {}
  PostgresqlTestServer(PostgresqlTestServer&&) = default;
  ~PostgresqlTestServer() {
    // A forked child that exits (a daemon under test) must not drop its parent's databases.
    if (getpid() != m_creator) return;
    for (const auto& [dir, name] : m_created) drop(name);
  }

  const std::string& password() const { return m_password; }

  // The URI of `dir`'s database, created when new.
  std::string database_for(const std::filesystem::path& dir) {
    for (const auto& [made_for, name] : m_created)
      if (made_for == dir) return uri_of(name);
    drop_finished();
    const std::string name = database_name(dir);
    auto made = test::exec(admin(), "CREATE DATABASE " + name);
    if (!made) FAIL("cannot create the test database " << name << ": " << made.error().message);
    m_created.emplace_back(dir, name);
    return uri_of(name);
  }

  // A new database for `to`, a copy of `from`'s. REQUIRES: `from`'s exists and no
  // connection is open to it (PostgreSQL copies a template only when nobody uses it).
  void copy_database(const std::filesystem::path& from, const std::filesystem::path& to) {
    const auto source =
        std::find_if(m_created.begin(), m_created.end(), [&](const auto& c) { return c.first == from; });
    REQUIRE(source != m_created.end());
    const std::string source_name = source->second;
    const std::string name = database_name(to);
    auto made = test::exec(admin(), "CREATE DATABASE " + name + " TEMPLATE " + source_name);
    if (!made) FAIL("cannot copy the test database " << source_name << ": " << made.error().message);
    m_created.emplace_back(to, name);
  }

 private:
  static std::optional<PostgresqlTestServer> make() {
    const char* backend = std::getenv("DISPATCHD_TEST_BACKEND");
    if (!backend || std::string_view(backend) != "postgresql") return std::nullopt;
    const char* dir = std::getenv("DISPATCHD_TEST_POSTGRESQL_DIR");
    if (!dir || !*dir) {
      throw std::runtime_error(
          "DISPATCHD_TEST_BACKEND=postgresql needs DISPATCHD_TEST_POSTGRESQL_DIR (tests/postgresql/cluster.sh start "
          "DIR)");
    }
    const auto line = [&](const char* file) {
      std::ifstream in(std::string(dir) + "/" + file);
      std::string text;
      std::getline(in, text);
      return text;
    };
    return PostgresqlTestServer(line("uri"), line("password"));
  }

  static std::string database_name(const std::filesystem::path& dir) {
    std::string name = "t_";
    for (const char c : dir.filename().string())
      name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
    return name;
  }

  std::string uri_of(const std::string& name) const { return m_uri.substr(0, m_uri.rfind('/') + 1) + name; }

  store::Database& admin() {
    if (!m_admin) {
      auto db = store::Database::open(m_uri, store::Database::Mode::existing, {m_password});
      if (!db) throw std::runtime_error("cannot reach the test server: " + db.error().message);
      m_admin.emplace(std::move(*db));
    }
    return *m_admin;
  }

  // FORCE: a connection the finished test left open must not keep its database.
  void drop(const std::string& name) {
    // Also runs at exit, outside any test case: stderr, not Catch.
    if (auto dropped = test::exec(admin(), "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); !dropped)
      std::fprintf(stderr, "cannot drop the test database %s: %s\n", name.c_str(), dropped.error().message.c_str());
  }

  void drop_finished() {
    std::erase_if(m_created, [this](const auto& created) {
      if (std::filesystem::exists(created.first)) return false;
      drop(created.second);
      return true;
    });
  }

  std::string m_uri;
  std::string m_password;
  pid_t m_creator = getpid();
  std::optional<store::Database> m_admin;
  std::vector<std::pair<std::filesystem::path, std::string>> m_created;
};

inline bool on_postgresql() { return PostgresqlTestServer::get() != nullptr; }
inline store::Backend test_backend() { return on_postgresql() ? store::Backend::postgresql : store::Backend::sqlite; }

// SQL for tests that tamper with the audit trail or read its details, on either backend.
inline std::string drop_audit_trigger() {
  return on_postgresql() ? "DROP TRIGGER audit_no_update ON audit; " : "DROP TRIGGER audit_no_update; ";
}
inline std::string json_text(std::string_view column, std::string_view key) {
  return store::sql::json_text(test_backend(), column, key);
}
inline std::string json_integer(std::string_view column, std::string_view key) {
  return store::sql::json_integer(test_backend(), column, key);
}
// A member below the top level, as text: `path` is SQLite's JSON path without its `$`, keys
// and [N] indexes (".last_errors[0].code", "[0].code").
inline std::string json_path_text(std::string_view column, std::string_view path) {
  if (!on_postgresql()) return "json_extract(" + std::string(column) + ", '$" + std::string(path) + "')";
  std::string steps;
  for (const char c : path) {
    if (c == '.' || c == '[') {
      if (!steps.empty()) steps += ',';
    } else if (c != ']') {
      steps += c;
    }
  }
  return "(" + std::string(column) + "::jsonb #>> '{" + steps + "}')";
}
// The length of the JSON array at the top-level `key`.
inline std::string json_array_length(std::string_view column, std::string_view key) {
  if (!on_postgresql()) return "json_array_length(" + std::string(column) + ", '$." + std::string(key) + "')";
  return "jsonb_array_length(" + std::string(column) + "::jsonb -> '" + std::string(key) + "')";
}

// Opens `dir`'s database (see the top of this file), unmigrated when new: what
// Database::open(dir/d.db, mode) does on SQLite.
inline store::Result<store::Database> open_db(const TempDir& dir,
                                              store::Database::Mode mode = store::Database::Mode::create) {
  auto* server = PostgresqlTestServer::get();
  if (server) return store::Database::open(server->database_for(dir.path()), mode, {server->password()});
  return store::Database::open(dir.file("d.db"), mode);
}

// `dir`'s database as a configuration file names it: on PostgreSQL its URI and, in
// `password_env` (set here), its password; on SQLite the file d.db beside the configuration.
// JSON members without braces, for a test's configuration text.
inline std::string database_config_keys(const TempDir& dir, const char* password_env = "DISPATCHD_TEST_DB_PASSWORD") {
  if (auto* server = PostgresqlTestServer::get()) {
    ::setenv(password_env, server->password().c_str(), 1);
    return R"("database": ")" + server->database_for(dir.path()) + R"(", "database_password_env": ")" + password_env +
           "\"";
  }
  return R"("database": ")" + dir.file("d.db") + "\"";
}

// Copies `from`'s database to `to` (which has none yet): a state to come back to later, as
// a backup is. REQUIRES: no connection open to `from`'s database.
inline void copy_db(const TempDir& from, const TempDir& to) {
  if (auto* server = PostgresqlTestServer::get()) {
    server->copy_database(from.path(), to.path());
    return;
  }
  auto db = store::Database::open(from.file("d.db"), store::Database::Mode::existing);
  REQUIRE(db);
  REQUIRE(store::backup(*db, to.file("d.db")));
}

// The shipped migrations of the run's backend.
inline std::vector<store::Migration> shipped_migrations() {
  auto migrations = store::load_migrations(source_path("migrations"), test_backend());
  REQUIRE(migrations);
  return std::move(*migrations);
}

// Opens `dir`'s database and applies the shipped migrations.
inline store::Database migrated_db(const TempDir& dir) {
  auto db = open_db(dir);
  if (!db) FAIL("cannot open the test database: " << db.error().message);
  REQUIRE(store::migrate(*db, shipped_migrations(), store::format_time(k_t0)));
  return std::move(*db);
}

// Opens `dir`'s database and applies every shipped migration but `version`: a database as
// an older binary left that migration's tables, for the tests of an upgrade (then
// migrate_all). The later ones are applied too, because today's writers (insert_inbound's
// audit row with its salted digest, 0013) need their columns; an upgrade test must not
// depend on them. A later one that alters the skipped one's tables waits with it (0015 adds a
// column to 0008's and 0010's counter tables; 0022 and 0033 make v_messages again, with 0010's cost; 0025
// counts 0010's cost; 0034 renames a rebuilt table, which has SQLite check every view, 0031's v_actions
// with 0021's columns among them, and copies 0028's column, which 0021's rebuild drops; 0035 rebuilds
// the inbox and makes again what reads it: v_messages with 0010's cost, v_actions and v_tool_calls
// with 0021's columns, 0025's spend trigger; 0037 makes v_attempts again, with 0010's cost).
inline store::Database db_before_migration(const TempDir& dir, int version) {
  auto db = open_db(dir);
  if (!db) FAIL("cannot open the test database: " << db.error().message);
  auto migrations = shipped_migrations();
  const auto alters_it = [version](int later) {
    return (later == 15 && (version == 8 || version == 10)) ||
           ((later == 22 || later == 25 || later == 33 || later == 37) && version == 10) ||
           ((later == 28 || later == 34) && version == 21) ||
           (later == 35 && (version == 10 || version == 21 || version == 25));
  };
  std::erase_if(migrations, [&](const store::Migration& m) { return m.version == version || alters_it(m.version); });
  REQUIRE(store::migrate(*db, migrations, store::format_time(k_t0)));
  return std::move(*db);
}

// Applies the shipped migrations still pending, recorded as applied at `now`.
inline void migrate_all(store::Database& db, store::Time now) {
  REQUIRE(store::migrate(db, shipped_migrations(), store::format_time(now)));
}

}  // namespace dispatchd::test
