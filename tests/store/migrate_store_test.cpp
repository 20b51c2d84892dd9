// store::migrate_store (store/tools/migrate_store.h): a seeded SQLite store moved into a fresh
// database on the test server (DISPATCHD_TEST_POSTGRESQL_DIR, tests/postgresql/cluster.sh);
// and store::snapshot_to_sqlite (store/tools/sqlite_snapshot.h), that store copied back.
// White-box only to read every table generically (store/internal/sql.h's Query), hence the
// store's private flag on this target.

#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <expected>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "store/audit.h"
#include "store/cursor.h"
#include "store/escalation_feed.h"
#include "store/inbox.h"
#include "store/internal/sql.h"
#include "store/media.h"
#include "store/migrations.h"
#include "store/staff.h"
#include "store/tools/archive.h"
#include "store/tools/migrate_store.h"
#include "store/tools/sqlite_snapshot.h"
#include "tests/store/temp_dir.h"
#include "tests/support/raw_sql.h"
#include "tests/support/seed.h"
#include "tests/test_util.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using store::Database;
using store::MigrateStoreFailure;

namespace {

const store::Time k_start = std::chrono::sys_days{std::chrono::November / 30 / 2026} + 9h;

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// A database of the test's own on the test server, dropped at the end.
class TargetDatabase {
 public:
  TargetDatabase() {
    const char* dir = std::getenv("DISPATCHD_TEST_POSTGRESQL_DIR");
    if (!dir || !*dir) FAIL("DISPATCHD_TEST_POSTGRESQL_DIR is not set (tests/postgresql/cluster.sh start DIR)");
    m_server_uri = first_line(std::string(dir) + "/uri");
    m_password = first_line(std::string(dir) + "/password");
    m_name = "t_move_" + std::to_string(::getpid()) + "_" + std::to_string(++s_count);
    auto server = admin();
    REQUIRE(test::exec(server, "CREATE DATABASE " + m_name));
  }
  ~TargetDatabase() {
    auto db = admin();
    CHECK(test::exec(db, "DROP DATABASE IF EXISTS " + m_name + " WITH (FORCE)"));
  }
  TargetDatabase(const TargetDatabase&) = delete;
  TargetDatabase& operator=(const TargetDatabase&) = delete;

  Database open() const {
    auto db = Database::open(uri(), Database::Mode::existing, {m_password});
    if (!db) FAIL(db.error().message);
    return std::move(*db);
  }

 private:
  std::string uri() const { return m_server_uri.substr(0, m_server_uri.rfind('/') + 1) + m_name; }
  Database admin() const {
    auto db = Database::open(m_server_uri, Database::Mode::existing, {m_password});
    if (!db) FAIL(db.error().message);
    return std::move(*db);
  }
  std::string m_server_uri;
  std::string m_password;
  std::string m_name;
  static inline int s_count = 0;
};

std::vector<store::Migration> migrations_of(store::Backend backend) {
  auto migrations = store::load_migrations(test::source_path("migrations"), backend);
  REQUIRE(migrations);
  return std::move(*migrations);
}

// A SQLite store with rows in every table: the seed history (inbox, attempts with costs,
// actions, escalations, audit, metrics), staff accounts and a session, a poll cursor, the
// notify cursor, and an anchor left by archiving the first day.
Database seeded_source(const test::TempDir& dir) {
  auto db = Database::open(dir.file("d.db"));
  REQUIRE(db);
  REQUIRE(store::migrate(*db, migrations_of(store::Backend::sqlite), store::format_time(k_start)));
  REQUIRE(test::seed_history(*db, k_start));
  const store::Time later = k_start + 48h;
  REQUIRE(store::add_staff(*db, "ana", std::string(64, 'a'), "admin", later));
  REQUIRE(store::add_staff(*db, "bo", std::string(64, 'b'), "admin", later));
  REQUIRE(store::revoke_staff(*db, "bo", "admin", later + 1min));
  REQUIRE(store::open_session(*db, std::string(64, 'c'), "ana", "csrf-1", later + 2min));
  REQUIRE(store::write_cursor(*db, "gmail", "support@example.com", "12345", later));
  REQUIRE(store::init_notify_cursor(*db, later));
  store::ArchiveOptions archive;
  archive.before = "2026-12-01";
  archive.migrations = migrations_of(store::Backend::sqlite);
  archive.now = store::format_time(later + 3min);
  const auto archived = store::archive_before(*db, dir.file("archive.db"), archive);
  REQUIRE(archived);
  REQUIRE(archived->moved.messages > 0);
  // A photo kept in two chunks, every byte value in them, and a file refused.
  store::InboundMessage photo{"whatsapp", "wamid.photo", "34600000009", "34600000009", "[image]", "{}", "image"};
  photo.media.push_back({store::MediaKind::image, "media-1", "image/jpeg", std::string(64, 'a'), "", false});
  photo.media.push_back({store::MediaKind::document, "media-2", "application/pdf", "", "big.pdf", false});
  REQUIRE(store::insert_inbound(*db, photo, later + 4min));
  auto file = store::claim_media(*db, "fetcher", later + 4min, 60s);
  REQUIRE(file);
  REQUIRE(*file);
  auto writer = store::BlobWriter::begin(*db, (*file)->id, later + 4min);
  REQUIRE(writer);
  std::string bytes(store::k_media_chunk_bytes, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 256);
  REQUIRE(writer->append(bytes));
  REQUIRE(writer->append("tail"));
  REQUIRE(store::finish_media(*db, (*file)->id, *writer, {std::string(64, 'a'), "image/jpeg", false}, later + 4min));
  auto big = store::claim_media(*db, "fetcher", later + 4min, 60s);
  REQUIRE(big);
  REQUIRE(*big);
  REQUIRE(store::refuse_media(*db, (*big)->id, store::MediaState::over_cap, "over the cap", later + 4min));
  return std::move(*db);
}

// The move under test, with the shipped PostgreSQL migrations.
std::expected<store::MigrateStoreResult, store::MigrateStoreError> move_store(
    Database& source, Database& target, const store::MigrateStoreOptions& options = {}) {
  return store::migrate_store(source, target, migrations_of(store::Backend::postgresql), store::format_time(k_start),
                              options);
}

long long count(Database& db, const std::string& sql) {
  auto n = test::query_int(db, sql);
  REQUIRE(n);
  return *n;
}

// The table's columns, and its primary key's in key order.
std::pair<std::vector<std::string>, std::string> columns_of(Database& sqlite, const std::string& table) {
  auto q = store::Query::prepare(sqlite, "SELECT name, pk FROM pragma_table_info(?1) ORDER BY pk, cid");
  REQUIRE(q);
  q->bind(1, table);
  std::vector<std::string> names;
  std::string key;
  while (*q->step()) {
    names.push_back(q->text(0));
    if (q->integer(1) > 0) key += (key.empty() ? "" : ", ") + q->text(0);
  }
  return {names, key};
}

// Every table of the source, row by row and column by column, against the target's (numbers
// as numbers: SQLite and PostgreSQL print a double differently).
void require_same_rows(Database& source, Database& target) {
  auto tables = store::Query::prepare(source,
                                      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
                                      " AND name <> 'schema_migrations' ORDER BY name");
  REQUIRE(tables);
  int compared_tables = 0;
  while (*tables->step()) {
    const std::string table = tables->text(0);
    const auto [columns, key] = columns_of(source, table);
    REQUIRE_FALSE(key.empty());  // every table has a primary key: rows line up by it
    std::string list;
    for (const auto& c : columns) list += (list.empty() ? "" : ", ") + c;
    const std::string select = "SELECT " + list + " FROM " + table + " ORDER BY " + key;
    auto a = store::Query::prepare(source, select);
    auto b = store::Query::prepare(target, select);
    REQUIRE(a);
    REQUIRE(b);
    long long rows = 0;
    while (true) {
      auto more_a = a->step();
      auto more_b = b->step();
      REQUIRE(more_a);
      REQUIRE(more_b);
      INFO("table " << table << ", row " << rows);
      REQUIRE(*more_a == *more_b);
      if (!*more_a) break;
      for (int c = 0; c < static_cast<int>(columns.size()); ++c) {
        INFO("column " << columns[c]);
        REQUIRE(a->is_null(c) == b->is_null(c));
        if (a->is_null(c)) continue;
        if (columns[c] == "cost_usd")
          CHECK(*a->optional_real(c) == *b->optional_real(c));
        else if (table == "media_chunks" && columns[c] == "data")
          CHECK(a->blob(c) == b->blob(c));
        else
          CHECK(a->text(c) == b->text(c));
      }
      ++rows;
    }
    ++compared_tables;
  }
  CHECK(compared_tables >= 13);
}

// True when the target has no table at all: the move rolled back its migrations too.
bool untouched(Database& target) {
  return count(target, "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()") == 0;
}

}  // namespace

TEST_CASE("migrate_store moves every table row by row with ids, chain, anchor and identities", "[migrate_store]") {
  test::TempDir dir;
  auto source = seeded_source(dir);
  // Every table that holds a deployment's data has rows before the move.
  for (const char* table : {"inbox", "attempts", "actions", "escalations", "audit", "staff_accounts", "staff_sessions",
                            "poll_cursors", "notify_cursor", "metric_counts", "metric_latency", "metric_usage",
                            "audit_anchor", "media", "media_blobs", "media_chunks"}) {
    INFO(table);
    CHECK(count(source, std::string("SELECT count(*) FROM ") + table) > 0);
  }
  CHECK(count(source, "SELECT count(*) FROM attempts WHERE cost_usd IS NOT NULL") > 0);
  TargetDatabase pg;
  auto target = pg.open();

  const int batch_rows = GENERATE(1, 3, 128);
  INFO("batch_rows " << batch_rows);
  std::vector<std::string> progress;
  store::MigrateStoreOptions options;
  options.batch_rows = batch_rows;
  options.on_table = [&](const store::TableCopied& t) { progress.push_back(t.table); };
  const auto moved = store::migrate_store(source, target, migrations_of(store::Backend::postgresql),
                                          store::format_time(k_start + 72h), options);
  if (!moved) FAIL(moved.error().error.message);

  // Parents before children, every table reported once.
  const auto at = [&](const std::string& t) {
    return std::find(progress.begin(), progress.end(), t) - progress.begin();
  };
  CHECK(progress.size() == moved->tables.size());
  CHECK(at("inbox") < at("attempts"));
  CHECK(at("escalations") < at("actions"));
  CHECK(at("staff_accounts") < at("staff_sessions"));
  CHECK(std::find(progress.begin(), progress.end(), "schema_migrations") == progress.end());

  require_same_rows(source, target);
  auto source_version = store::schema_version(source);
  auto target_version = store::schema_version(target);
  REQUIRE(source_version);
  REQUIRE(target_version);
  CHECK(*target_version == *source_version);
  CHECK(moved->schema_version == *source_version);

  const auto chain = store::verify_audit(target);
  REQUIRE(chain);
  CHECK_FALSE(chain->first_broken);
  CHECK(chain->events == moved->audit_events);
  REQUIRE(chain->anchor);  // the archived prefix: the chain starts at the same anchor
  const auto source_anchor = store::audit_anchor(source);
  REQUIRE(source_anchor);
  REQUIRE(*source_anchor);
  CHECK(chain->anchor->last_hash == (*source_anchor)->last_hash);

  // The moved store goes on: new rows take ids after the copied ones, the chain still verifies,
  // and the metric triggers count again.
  const long long newest_inbox = count(target, "SELECT max(id) FROM inbox");
  const long long messages_before =
      count(target, "SELECT coalesce(sum(n), 0) FROM metric_counts WHERE metric = 'messages'");
  const auto inserted = store::insert_inbound(
      target, {"whatsapp", "wamid.after-move", "c-after", "34600000001", "hola", "{}", ""}, k_start + 73h);
  REQUIRE(inserted);
  CHECK(inserted->id == newest_inbox + 1);
  CHECK(count(target, "SELECT coalesce(sum(n), 0) FROM metric_counts WHERE metric = 'messages'") ==
        messages_before + 1);
  const auto after = store::verify_audit(target);
  REQUIRE(after);
  CHECK_FALSE(after->first_broken);
  CHECK(after->events == moved->audit_events + 1);
}

TEST_CASE("migrate_store refuses a target that holds rows and leaves it as it was", "[migrate_store]") {
  test::TempDir dir;
  auto source = seeded_source(dir);
  TargetDatabase pg;
  auto target = pg.open();
  REQUIRE(move_store(source, target));
  const long long inbox = count(target, "SELECT count(*) FROM inbox");
  const long long audit = count(target, "SELECT count(*) FROM audit");

  const auto again = move_store(source, target);
  REQUIRE_FALSE(again);
  CHECK(again.error().failure == MigrateStoreFailure::target_not_empty);
  CHECK(again.error().error.kind == store::ErrorKind::refused);
  CHECK(count(target, "SELECT count(*) FROM inbox") == inbox);
  CHECK(count(target, "SELECT count(*) FROM audit") == audit);
  CHECK_FALSE(source.in_transaction());
}

TEST_CASE("migrate_store takes an empty target that is already migrated", "[migrate_store]") {
  test::TempDir dir;
  auto source = seeded_source(dir);
  TargetDatabase pg;
  auto target = pg.open();
  REQUIRE(store::migrate(target, migrations_of(store::Backend::postgresql), store::format_time(k_start)));
  const auto moved = move_store(source, target);
  if (!moved) FAIL(moved.error().error.message);
  require_same_rows(source, target);
}

TEST_CASE("migrate_store moves a raw payload that is not UTF-8 as base64, its bytes intact", "[migrate_store]") {
  test::TempDir dir;
  auto source = seeded_source(dir);
  // A mail's raw bytes in ISO-8859-1, as SQLite kept them before migration 0016: PostgreSQL's
  // TEXT would refuse them as they are.
  const long long id = count(source, "SELECT min(id) FROM inbox");
  REQUIRE(test::exec(source,
                     "UPDATE inbox SET raw_payload = CAST(X'5375626A6563743A20E96C20F161' AS TEXT),"
                     " raw_encoding = NULL WHERE id = " +
                         std::to_string(id)));
  TargetDatabase pg;
  auto target = pg.open();
  const auto moved = move_store(source, target);
  if (!moved) FAIL(moved.error().error.message);
  CHECK(count(target, "SELECT count(*) FROM inbox WHERE raw_encoding = 'base64' AND id = " + std::to_string(id)) == 1);
  const auto stored = store::stored_inbound(target, id);
  REQUIRE(stored);
  CHECK(stored->raw_payload == std::string("Subject: \xE9l \xF1"
                                           "a"));
  CHECK(count(target, "SELECT count(*) FROM inbox WHERE raw_encoding IS NOT NULL") == 1);
}

TEST_CASE("migrate_store refuses a source whose audit chain is broken, before writing anything", "[migrate_store]") {
  test::TempDir dir;
  auto source = seeded_source(dir);
  REQUIRE(test::exec(source,
                     "DROP TRIGGER audit_no_update; UPDATE audit SET actor = 'mallory' WHERE id = (SELECT max(id) - 2 "
                     "FROM audit)"));
  TargetDatabase pg;
  auto target = pg.open();
  const auto moved = move_store(source, target);
  REQUIRE_FALSE(moved);
  CHECK(moved.error().failure == MigrateStoreFailure::source_chain_broken);
  CHECK(untouched(target));
}

TEST_CASE("migrate_store rolls the whole target back when a row fails midway", "[migrate_store]") {
  test::TempDir dir;
  auto source = seeded_source(dir);
  TargetDatabase pg;
  auto target = pg.open();
  MigrateStoreFailure want = MigrateStoreFailure::database;
  SECTION("a foreign key SQLite did not check") {
    // actions comes after inbox, attempts and escalations: the failure is well into the copy.
    REQUIRE(test::exec(source,
                       "PRAGMA foreign_keys = OFF; UPDATE actions SET escalation_id = 999999 WHERE id = (SELECT "
                       "max(id) FROM actions); PRAGMA foreign_keys = ON"));
    want = MigrateStoreFailure::database;
  }
  SECTION("a value whose type does not fit its column") {
    REQUIRE(test::exec(source, "UPDATE attempts SET latency_ms = 'slow' WHERE id = (SELECT max(id) FROM attempts)"));
    want = MigrateStoreFailure::value_mismatch;
  }
  std::vector<std::string> copied;
  store::MigrateStoreOptions options;
  options.on_table = [&](const store::TableCopied& t) { copied.push_back(t.table); };
  const auto moved = move_store(source, target, options);
  REQUIRE_FALSE(moved);
  CHECK(moved.error().failure == want);
  if (want == MigrateStoreFailure::database) CHECK(moved.error().error.kind == store::ErrorKind::refused);
  CHECK_FALSE(copied.empty());  // some tables were written before the failure ...
  CHECK(untouched(target));     // ... and rolled back with the schema
}

TEST_CASE("migrate_store rolls the target back when the source is written to during the move", "[migrate_store]") {
  test::TempDir dir;
  auto source = seeded_source(dir);
  TargetDatabase pg;
  auto target = pg.open();
  auto daemon = Database::open(dir.file("d.db"), Database::Mode::existing);
  REQUIRE(daemon);
  bool wrote = false;
  store::MigrateStoreOptions options;
  options.on_table = [&](const store::TableCopied&) {
    if (wrote) return;
    wrote = true;
    // A daemon still running: its commit lands after the snapshot began.
    REQUIRE(store::record_event(*daemon, {store::format_time(k_start + 80h), store::AuditKind::config_reload,
                                          std::nullopt, "dispatchd", "{}"}));
  };
  const auto moved = move_store(source, target, options);
  REQUIRE(wrote);
  REQUIRE_FALSE(moved);
  CHECK(moved.error().failure == MigrateStoreFailure::source_changed);
  CHECK(untouched(target));

  SECTION("and a second run, with the writer gone, moves everything") {
    const auto again = move_store(source, target);
    if (!again) FAIL(again.error().error.message);
    require_same_rows(source, target);
  }
}

TEST_CASE("migrate_store refuses engines the wrong way round", "[migrate_store]") {
  test::TempDir dir;
  auto source = seeded_source(dir);
  auto other = Database::open(dir.file("other.db"));
  REQUIRE(other);
  const auto moved = move_store(source, *other);
  REQUIRE_FALSE(moved);
  CHECK(moved.error().failure == MigrateStoreFailure::schema_mismatch);
}

// ---- store::snapshot_to_sqlite (store/tools/sqlite_snapshot.h): the way back, for online replay ----

namespace {

std::vector<std::string> triggers_of(Database& sqlite) {
  auto q = store::Query::prepare(sqlite,
                                 "SELECT name || ': ' || sql FROM sqlite_master WHERE type = 'trigger'"
                                 " ORDER BY name");
  REQUIRE(q);
  std::vector<std::string> out;
  while (*q->step()) out.push_back(q->text(0));
  return out;
}

Database opened(const std::string& path) {
  auto db = Database::open(path, Database::Mode::existing);
  if (!db) FAIL(db.error().message);
  return std::move(*db);
}

}  // namespace

TEST_CASE("snapshot_to_sqlite copies a PostgreSQL store into a SQLite file row for row, shards folded", "[snapshot]") {
  test::TempDir dir;
  auto source = seeded_source(dir);
  // A raw payload stored as base64 on the server (not UTF-8) stays base64 in the copy.
  const long long raw_id = count(source, "SELECT min(id) FROM inbox");
  REQUIRE(test::exec(source, "UPDATE inbox SET raw_payload = CAST(X'E96C' AS TEXT), raw_encoding = NULL WHERE id = " +
                                 std::to_string(raw_id)));
  TargetDatabase pg;
  auto server = pg.open();
  const auto moved = move_store(source, server);
  if (!moved) FAIL(moved.error().error.message);
  REQUIRE(test::exec(source, "UPDATE inbox SET raw_payload = '6Ww=', raw_encoding = 'base64' WHERE id = " +
                                 std::to_string(raw_id)));  // as 0016 and the move store it: base64 of E9 6C

  const auto copied = store::snapshot_to_sqlite(server, dir.file("copy.db"), migrations_of(store::Backend::sqlite),
                                                store::format_time(k_start + 80h));
  if (!copied) FAIL(copied.error().message);
  CHECK(copied->schema_version == moved->schema_version);
  CHECK(copied->audit_events == moved->audit_events);
  CHECK_FALSE(std::filesystem::exists(dir.file("copy.db.partial")));
  CHECK_FALSE(std::filesystem::exists(dir.file("copy.db-wal")));  // one self-contained file
  auto copy = opened(dir.file("copy.db"));
  require_same_rows(source, copy);
  const auto raw = store::stored_inbound(copy, raw_id);
  REQUIRE(raw);
  CHECK(raw->raw_payload == "\xE9l");
  // The triggers came back as the migrations made them, and count again.
  CHECK(triggers_of(copy) == triggers_of(source));
  const long long messages = count(copy, "SELECT sum(n) FROM metric_counts WHERE metric = 'messages'");
  REQUIRE(store::insert_inbound(copy, {"whatsapp", "wamid.in-copy", "c-copy", "34600000002", "hola", "{}", ""},
                                k_start + 81h));
  CHECK(count(copy, "SELECT sum(n) FROM metric_counts WHERE metric = 'messages'") == messages + 1);
  const auto chain = store::verify_audit(copy);
  REQUIRE(chain);
  CHECK_FALSE(chain->first_broken);

  // Counters spread over shards on the server (one per connection, 0015) sum to one row each.
  REQUIRE(test::exec(server,
                     "INSERT INTO metric_counts (metric, label1, label2, shard, n)"
                     " SELECT metric, label1, label2, 7, 5 FROM metric_counts WHERE shard = 0"));
  REQUIRE(test::exec(server,
                     "INSERT INTO metric_usage (provider, model, shard, input_tokens, cost_usd)"
                     " SELECT provider, model, 3, 100, 0.5 FROM metric_usage WHERE shard = 0"));
  const auto folded = store::snapshot_to_sqlite(server, dir.file("folded.db"), migrations_of(store::Backend::sqlite),
                                                store::format_time(k_start + 82h));
  if (!folded) FAIL(folded.error().message);
  auto second = opened(dir.file("folded.db"));
  const long long rows = count(source, "SELECT count(*) FROM metric_counts");
  CHECK(count(second, "SELECT count(*) FROM metric_counts") == rows);
  CHECK(count(second, "SELECT count(*) FROM metric_counts WHERE shard <> 0") == 0);
  CHECK(count(second, "SELECT sum(n) FROM metric_counts") ==
        count(source, "SELECT sum(n) FROM metric_counts") + 5 * rows);
  CHECK(count(second, "SELECT sum(input_tokens) FROM metric_usage") ==
        count(source, "SELECT sum(input_tokens) FROM metric_usage") +
            100 * count(source, "SELECT count(*) FROM metric_usage"));
  auto usage = store::Query::prepare(source, "SELECT provider, model, cost_usd FROM metric_usage");
  REQUIRE(usage);
  int usage_rows = 0;
  while (*usage->step()) {
    auto folded_cost = store::Query::prepare(second,
                                             "SELECT cost_usd FROM metric_usage WHERE provider = ?1"
                                             " AND model = ?2");
    REQUIRE(folded_cost);
    folded_cost->bind(1, usage->text(0)).bind(2, usage->text(1));
    REQUIRE(*folded_cost->step());
    CHECK(*folded_cost->optional_real(0) == *usage->optional_real(2) + 0.5);
    ++usage_rows;
  }
  CHECK(usage_rows > 0);
}

TEST_CASE("snapshot_to_sqlite refuses an existing file and a schema it lacks, and leaves no file behind",
          "[snapshot]") {
  test::TempDir dir;
  auto source = seeded_source(dir);
  TargetDatabase pg;
  auto server = pg.open();
  REQUIRE(move_store(source, server));

  // An existing file is never overwritten.
  { std::ofstream(dir.file("taken.db")) << "mine"; }
  const auto taken = store::snapshot_to_sqlite(server, dir.file("taken.db"), migrations_of(store::Backend::sqlite),
                                               store::format_time(k_start));
  REQUIRE_FALSE(taken);
  CHECK(taken.error().kind == store::ErrorKind::refused);
  CHECK(first_line(dir.file("taken.db")) == "mine");

  // A dispatchctl older than the server's schema.
  auto older = migrations_of(store::Backend::sqlite);
  older.pop_back();
  const auto lacking = store::snapshot_to_sqlite(server, dir.file("new.db"), older, store::format_time(k_start));
  REQUIRE_FALSE(lacking);
  CHECK(lacking.error().kind == store::ErrorKind::schema);
  CHECK_FALSE(std::filesystem::exists(dir.file("new.db")));
  CHECK_FALSE(std::filesystem::exists(dir.file("new.db.partial")));
  CHECK_FALSE(server.in_transaction());

  // A SQLite store is backed up, not snapshotted.
  const auto wrong = store::snapshot_to_sqlite(source, dir.file("new.db"), migrations_of(store::Backend::sqlite),
                                               store::format_time(k_start));
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().kind == store::ErrorKind::refused);
}
