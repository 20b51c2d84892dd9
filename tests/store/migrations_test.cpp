#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "store/attempts.h"
#include "store/audit.h"
#include "store/audit_digest.h"
#include "store/cursor.h"
#include "store/dialect.h"
#include "store/inbox.h"
#include "store/migrations.h"
#include "store/queue.h"
#include "store/tool_calls.h"
#include "store/views.h"
#include "tests/store/store_fixture.h"
#include "tests/store/temp_dir.h"
#include "tests/support/raw_sql.h"
#include "tests/support/seed.h"
#include "tests/test_util.h"

using namespace dispatchd;

namespace {

const std::string k_now = "2026-11-30T12:00:00Z";

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

store::Database open(const std::string& path) {
  auto db = store::Database::open(path);
  REQUIRE(db);
  return std::move(*db);
}

std::vector<store::Migration> load(const std::string& folder) {
  auto loaded = store::load_migrations(folder);
  REQUIRE(loaded);
  return std::move(*loaded);
}

// The run's backend (tests/store/store_fixture.h): its folder of migrations under `dir`/m
// (created), and those migrations loaded.
std::string folder(const test::TempDir& dir) {
  const std::string path = dir.file("m/" + std::string(store::to_string(test::test_backend())));
  std::filesystem::create_directories(path);
  return path;
}
std::vector<store::Migration> load_run(const std::string& root) {
  auto loaded = store::load_migrations(root, test::test_backend());
  REQUIRE(loaded);
  return std::move(*loaded);
}

long long table_exists(store::Database& db, const std::string& table) {
  return test::query_int(db, store::sql::table_exists(db.backend(), table)).value();
}

// Applies the run's shipped migrations older than `version` to `db`: a database as an older
// binary left it. Returns every shipped migration, for the upgrade.
std::vector<store::Migration> migrate_shipped_before(store::Database& db, int version) {
  auto migrations = load_run(test::source_path("migrations"));
  std::vector<store::Migration> before;
  for (const auto& m : migrations)
    if (m.version < version) before.push_back(m);
  REQUIRE(store::migrate(db, before, k_now));
  return migrations;
}

// What 0035 rebuilds (SQLite) or alters (PostgreSQL), what points at the inbox by id, and what
// reads it: each copied to a temporary table of the connection before the upgrade, and
// compared with itself row for row after it.
constexpr const char* k_kept_by_0035[] = {
    "inbox",      "poll_cursors", "attempts",         "actions",       "escalations",
    "audit",      "tool_calls",   "escalation_notes", "metric_counts", "spend_conversation_days",
    "v_messages", "v_actions",    "v_tool_calls",     "v_escalations", "v_audit"};

void keep_rows_before_0035(store::Database& db) {
  for (const char* name : k_kept_by_0035)
    REQUIRE(test::exec(db, "CREATE TEMPORARY TABLE kept_" + std::string(name) + " AS SELECT * FROM " + name));
}

// Rows in `name` that its copy lacks, plus rows in the copy that `name` lacks, plus the
// difference of their counts (EXCEPT folds duplicate rows).
long long rows_changed_since_0035(store::Database& db, const std::string& name) {
  const std::string kept = "kept_" + name;
  return test::query_int(db, "SELECT (SELECT count(*) FROM (SELECT * FROM " + name + " EXCEPT SELECT * FROM " + kept +
                                 ") d1) + (SELECT count(*) FROM (SELECT * FROM " + kept + " EXCEPT SELECT * FROM " +
                                 name + ") d2) + abs((SELECT count(*) FROM " + name + ") - (SELECT count(*) FROM " +
                                 kept + "))")
      .value();
}

// The CHECK constraints of a PostgreSQL table that involve `column`.
long long pg_checks_on(store::Database& db, const std::string& table, const std::string& column) {
  return test::query_int(db,
                         "SELECT count(*) FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid"
                         " AND a.attnum = ANY (c.conkey) WHERE c.conrelid = '" +
                             table + "'::regclass AND c.contype = 'c' AND a.attname = '" + column + "'")
      .value();
}

const char* const k_imap_insert =
    "INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload)"
    " VALUES ('imap', '<a1@example.test>', 'imap:a1', 'ana@example.test', 't', 'hola', '{}')";

}  // namespace

TEST_CASE("migrate: the shipped migrations build the documented views from empty", "[store]") {
  test::TempDir dir;
  auto db = test::open_db(dir).value();
  const auto migrations = load_run(test::source_path("migrations"));
  auto first = store::migrate(db, migrations, k_now);
  REQUIRE(first);
  CHECK(first->applied.front() == "0001_initial.sql");
  CHECK(first->version == migrations.back().version);
  for (const char* view : {"v_messages", "v_attempts", "v_actions", "v_escalations", "v_audit"}) {
    CAPTURE(view);
    CHECK(test::query_int(db, std::string(test::on_postgresql()
                                              ? "SELECT count(*) FROM pg_views WHERE viewname='"
                                              : "SELECT count(*) FROM sqlite_master WHERE type='view' AND name='") +
                                  view + "'")
              .value() == 1);
  }
  CHECK(test::query_int(db, "SELECT count(*) FROM schema_migrations WHERE applied_at = '" + k_now + "'").value() ==
        static_cast<long long>(migrations.size()));

  SECTION("a second run is a no-op") {
    auto again = store::migrate(db, migrations, "2027-01-01T00:00:00Z");
    REQUIRE(again);
    CHECK(again->applied.empty());
    CHECK(again->version == first->version);
  }
  SECTION("WAL, foreign keys and the unique inbox key are on") {
    auto other = test::open_db(dir).value();
    if (!test::on_postgresql()) {  // SQLite's settings per connection; PostgreSQL's are the server's
      CHECK(test::query_int(other, "PRAGMA foreign_keys").value() == 1);
      CHECK(test::query_int(other, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode='wal'").value() == 1);
    }
    const char* insert =
        "INSERT INTO inbox(channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload)"
        " VALUES ('whatsapp', 'wamid.1', 'c', 's', 't', 'hi', '{}')";
    REQUIRE(test::exec(other, insert));
    CHECK_FALSE(test::exec(other, insert));  // a redelivered message is stored once
    CHECK_FALSE(test::exec(other,
                           "INSERT INTO attempts(message_id, attempt, provider, model, verdict, created_at)"
                           " VALUES (999, 1, 'p', 'm', 'valid', 't')"));  // no such message
  }
}

TEST_CASE("migrate: a migration changed after it was applied is refused", "[store]") {
  test::TempDir dir;
  const std::string m = folder(dir);
  write(m + "/0001_a.sql", "CREATE TABLE a (x INTEGER);");
  auto db = test::open_db(dir).value();
  REQUIRE(store::migrate(db, load_run(dir.file("m")), k_now));

  write(m + "/0001_a.sql", "CREATE TABLE a (x INTEGER, y TEXT);");
  write(m + "/0002_b.sql", "CREATE TABLE b (x INTEGER);");
  auto refused = store::migrate(db, load_run(dir.file("m")), k_now);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("migration 0001_a.sql was changed after it was applied") != std::string::npos);
  CHECK(table_exists(db, "b") == 0);  // nothing applied
}

TEST_CASE("migrate: a database newer than the binary is refused", "[store]") {
  test::TempDir dir;
  const std::string m = folder(dir);
  write(m + "/0001_a.sql", "CREATE TABLE a (x INTEGER);");
  write(m + "/0002_b.sql", "CREATE TABLE b (x INTEGER);");
  auto db = test::open_db(dir).value();
  REQUIRE(store::migrate(db, load_run(dir.file("m")), k_now));
  std::filesystem::remove(m + "/0002_b.sql");
  auto refused = store::migrate(db, load_run(dir.file("m")), k_now);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("newer than this binary") != std::string::npos);
}

TEST_CASE("migrate: a failing migration leaves nothing half-applied", "[store]") {
  test::TempDir dir;
  const std::string m = folder(dir);
  write(m + "/0001_a.sql", "CREATE TABLE a (x INTEGER);");
  write(m + "/0002_bad.sql", "CREATE TABLE c (x INTEGER); CREATE TABLE a (x INTEGER);");
  auto db = test::open_db(dir).value();
  auto result = store::migrate(db, load_run(dir.file("m")), k_now);
  REQUIRE_FALSE(result);
  CHECK(result.error().message.starts_with("0002_bad.sql: "));
  CHECK(table_exists(db, "c") == 0);
  CHECK(test::query_int(db, "SELECT max(version) FROM schema_migrations").value() == 1);
}

TEST_CASE("load_migrations: names and versions are checked", "[store]") {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("sqlite"));
  write(dir.file("sqlite/0001_a.sql"), "SELECT 1;");
  write(dir.file("sqlite/notes.txt"), "ignored");
  CHECK(store::load_migrations(dir.path().string()));
  write(dir.file("sqlite/0001_b.sql"), "SELECT 1;");
  auto duplicate = store::load_migrations(dir.path().string());
  REQUIRE_FALSE(duplicate);
  CHECK(duplicate.error().message.find("two migrations have version 1") != std::string::npos);
  std::filesystem::remove(dir.file("sqlite/0001_b.sql"));
  write(dir.file("sqlite/1_short.sql"), "SELECT 1;");
  auto badly_named = store::load_migrations(dir.path().string());
  REQUIRE_FALSE(badly_named);
  CHECK(badly_named.error().message.find("NNNN_name.sql") != std::string::npos);
  CHECK_FALSE(store::load_migrations(dir.file("missing")));
}

TEST_CASE("load_migrations: each backend reads its own folder under the root", "[store]") {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("sqlite"));
  std::filesystem::create_directories(dir.file("postgresql"));
  write(dir.file("sqlite/0001_a.sql"), "CREATE TABLE a (id INTEGER PRIMARY KEY);");
  write(dir.file("postgresql/0001_a.sql"), "CREATE TABLE a (id BIGINT GENERATED BY DEFAULT AS IDENTITY);");
  const auto sqlite = load(dir.path().string());
  auto postgresql = store::load_migrations(dir.path().string(), store::Backend::postgresql);
  REQUIRE(postgresql);
  REQUIRE(sqlite.size() == 1);
  REQUIRE(postgresql->size() == 1);
  CHECK(sqlite[0].sql.find("INTEGER PRIMARY KEY") != std::string::npos);
  CHECK((*postgresql)[0].sql.find("IDENTITY") != std::string::npos);
  CHECK(sqlite[0].sha256 != (*postgresql)[0].sha256);
  // The root itself is not a backend's folder: its files are not read.
  write(dir.file("0002_stray.sql"), "SELECT 1;");
  CHECK(load(dir.path().string()).size() == 1);
}

TEST_CASE("load_migrations: the shipped backends have the same numbers and names", "[store]") {
  const auto sqlite = load(test::source_path("migrations"));
  auto postgresql = store::load_migrations(test::source_path("migrations"), store::Backend::postgresql);
  REQUIRE(postgresql);
  std::vector<std::string> sqlite_names;
  std::vector<std::string> postgresql_names;
  for (const auto& m : sqlite) sqlite_names.push_back(m.name);
  for (const auto& m : *postgresql) postgresql_names.push_back(m.name);
  CHECK(sqlite_names == postgresql_names);
  CHECK(sqlite_names.size() >= 13);
}

TEST_CASE("sha256_hex matches the standard test vector", "[store]") {
  CHECK(store::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("migrate: 0004 rebuilds the audit table with every row, and the chain still verifies", "[store][sqlite]") {
  test::TempDir dir;
  auto db = open(dir.file("d.db"));
  const auto migrations = load(test::source_path("migrations"));
  const std::vector<store::Migration> before(migrations.begin(), migrations.begin() + 3);
  REQUIRE(before.back().name == "0003_message_indexes.sql");
  REQUIRE(store::migrate(db, before, k_now));
  CHECK(test::query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_autoindex_audit_1'").value() == 1);
  // Rows as the store wrote them then (the formula before 0013's salted digest).
  std::string prev = store::k_audit_genesis;
  for (int i = 1; i <= 5; ++i) {
    const store::AuditRecord event{k_now, "received", std::nullopt, "dispatchd", "{\"n\":" + std::to_string(i) + "}"};
    const std::string hash = store::legacy_row_hash(prev, i, event);
    REQUIRE(test::exec(db, "INSERT INTO audit(id, at, event, actor, detail, prev_hash, hash) VALUES (" +
                               std::to_string(i) + ", '" + k_now + "', 'received', 'dispatchd', '" + event.detail +
                               "', '" + prev + "', '" + hash + "')"));
    prev = hash;
  }
  auto upgraded = store::migrate(db, migrations, k_now);
  REQUIRE(upgraded);
  CHECK(upgraded->applied.front() == "0004_audit_hash_not_indexed.sql");
  CHECK(test::query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_autoindex_audit_1'").value() == 0);
  CHECK(test::query_int(db, "SELECT count(*) FROM v_audit WHERE event = 'received'").value() == 5);
  const auto check = store::verify_audit(db);
  REQUIRE(check);
  CHECK(check->events == 6);  // and 0013's chain_migrated
  CHECK_FALSE(check->first_broken);
  CHECK_FALSE(test::exec(db, "UPDATE audit SET actor = 'mallory' WHERE id = 2"));  // still append-only
  REQUIRE(store::record_event(db, {k_now, store::AuditKind::received, std::nullopt, "dispatchd", "{\"n\":6}"}));
  CHECK(store::verify_audit(db)->events == 7);
}

TEST_CASE("migrate: 0034 lets escalations be window_closed and keeps every row, index, trigger and the view",
          "[store]") {
  test::TempDir dir;
  auto db = test::open_db(dir).value();
  const auto migrations = migrate_shipped_before(db, 34);
  // Rows as the store wrote them before: a message, an escalation holding its conversation.
  auto message = store::insert_inbound(db, {"whatsapp", "wamid.1", "c", "15551234567", "hi", "{}"}, test::k_t0);
  REQUIRE(message);
  auto held = store::open_escalation(
      db, {message->id, store::EscalationReason::conversation_limit, "{}", std::nullopt, std::nullopt}, test::k_t0);
  REQUIRE(held);
  REQUIRE(
      test::exec(db, "INSERT INTO conversation_holds (conversation_id, escalation_id, reason, since) VALUES ('c', " +
                         std::to_string(*held) + ", 'conversation_limit', 't')"));
  CHECK_FALSE(test::exec(db, "INSERT INTO escalations (message_id, reason, created_at) VALUES (" +
                                 std::to_string(message->id) + ", 'window_closed', 't')"));

  auto upgraded = store::migrate(db, migrations, k_now);
  REQUIRE(upgraded);
  CHECK(upgraded->applied.front() == "0034_window_closed.sql");
  CHECK(test::query_int(db, "SELECT count(*) FROM v_escalations WHERE escalation_id = " + std::to_string(*held) +
                                " AND reason = 'conversation_limit' AND status = 'open'")
            .value() == 1);
  auto closed = store::open_escalation(
      db, {message->id, store::EscalationReason::window_closed, "{}", std::string("{}"), std::nullopt}, test::k_t0);
  REQUIRE(closed);
  CHECK(*closed > *held);
  // The metric triggers count it; the hold's trigger still releases the conversation.
  CHECK(test::query_int(db,
                        "SELECT n FROM metric_counts WHERE metric = 'escalations' AND label1 = 'window_closed'"
                        " AND label2 = 'open'")
            .value() == 1);
  REQUIRE(test::exec(db, "UPDATE escalations SET status = 'resolved' WHERE id = " + std::to_string(*held)));
  CHECK(test::query_int(db, "SELECT count(*) FROM conversation_holds").value() == 0);
  if (!test::on_postgresql()) {
    CHECK(test::query_int(db, "SELECT count(*) FROM sqlite_master WHERE tbl_name = 'escalations' AND type = 'index'")
              .value() == 3);
    CHECK(test::query_int(db, "SELECT count(*) FROM sqlite_master WHERE tbl_name = 'escalations' AND type = 'trigger'")
              .value() == 3);
    CHECK(test::query_int(db, "SELECT count(*) FROM pragma_foreign_key_check").value() == 0);
  }
}

TEST_CASE("migrate: 0035 lets inbox and poll_cursors rows name any channel and keeps every row, id and the audit chain",
          "[store]") {
  using namespace std::chrono_literals;
  test::TempDir dir;
  auto db = test::open_db(dir).value();
  const auto migrations = migrate_shipped_before(db, 35);
  // A history as the store wrote it before: WhatsApp and Gmail messages with their attempts,
  // actions, escalations and audit events, a Gmail cursor, a tool call.
  if (auto seeded = test::seed_history(db, test::k_t0); !seeded) FAIL(seeded.error());
  REQUIRE(store::write_cursor(db, "gmail", "support@example.com", "123456", test::k_t0));
  const auto first_message = test::query_int(db, "SELECT min(id) FROM inbox").value();
  REQUIRE(store::record_tool_call(db,
                                  {.message_id = first_message,
                                   .action = "order_status",
                                   .tool = "https://shop.example/orders/{order}",
                                   .duration_ms = 12,
                                   .result_bytes = 80},
                                  test::k_t0));
  // Only WhatsApp and Gmail were allowed.
  CHECK_FALSE(test::exec(db, k_imap_insert));
  CHECK_FALSE(store::write_cursor(db, "imap", "soporte@example.test", "1700000000:42", test::k_t0));
  const auto chain = store::verify_audit(db);
  REQUIRE(chain);
  REQUIRE_FALSE(chain->first_broken);
  const auto last_message = test::query_int(db, "SELECT max(id) FROM inbox").value();
  CHECK(test::query_int(db, "SELECT count(DISTINCT channel) FROM inbox").value() == 2);
  if (test::on_postgresql()) {
    CHECK(pg_checks_on(db, "inbox", "channel") == 1);
    CHECK(pg_checks_on(db, "poll_cursors", "channel") == 1);
  } else {
    REQUIRE(test::exec(db,
                       "CREATE TEMPORARY TABLE kept_schema AS SELECT type, name, tbl_name, sql FROM sqlite_master"
                       " WHERE type <> 'table'"));
  }
  keep_rows_before_0035(db);

  std::vector<store::Migration> through_0035;
  for (const auto& m : migrations)
    if (m.version <= 35) through_0035.push_back(m);
  auto upgraded = store::migrate(db, through_0035, k_now);
  REQUIRE(upgraded);
  REQUIRE(upgraded->applied.size() == 1);
  CHECK(upgraded->applied.front() == "0035_channel_names.sql");

  // Every row and id kept, and what reads the inbox reads the same.
  for (const char* name : k_kept_by_0035) {
    CAPTURE(name);
    CHECK(rows_changed_since_0035(db, name) == 0);
  }
  const auto after = store::verify_audit(db);
  REQUIRE(after);
  CHECK_FALSE(after->first_broken);
  CHECK(after->events == chain->events);
  if (test::on_postgresql()) {
    CHECK(pg_checks_on(db, "inbox", "channel") == 0);
    CHECK(pg_checks_on(db, "poll_cursors", "channel") == 0);
    CHECK(pg_checks_on(db, "inbox", "state") == 1);  // the other columns keep theirs
    CHECK(pg_checks_on(db, "inbox", "outcome") == 1);
    CHECK(pg_checks_on(db, "inbox", "raw_encoding") == 1);
  } else {
    // The indexes (the unique one among them), triggers and views as 0034 left them.
    CHECK(test::query_int(
              db,
              "SELECT count(*) FROM (SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type <> 'table'"
              " EXCEPT SELECT * FROM kept_schema) d")
              .value() == 0);
    CHECK(test::query_int(db,
                          "SELECT count(*) FROM (SELECT * FROM kept_schema EXCEPT SELECT type, name, tbl_name, sql"
                          " FROM sqlite_master WHERE type <> 'table') d")
              .value() == 0);
    CHECK(test::query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_autoindex_inbox_1'").value() ==
          1);
    CHECK(test::query_int(db, "SELECT count(*) FROM sqlite_master WHERE instr(sql, 'rebuilt') > 0").value() == 0);
    CHECK(test::query_int(db, "SELECT count(*) FROM pragma_foreign_key_check").value() == 0);
    CHECK(test::query_int(db, "PRAGMA foreign_keys").value() == 1);  // on again after the migration
  }

  // The later migrations too: what follows runs the store as it is now.
  REQUIRE(store::migrate(db, migrations, k_now));

  // A third channel's message and cursor.
  const store::InboundMessage mail{"imap", "<a1@example.test>", "imap:a1", "ana@example.test",
                                   "hola", "Subject: hola",     "email"};
  const auto later = test::k_t0 + 72h;
  auto stored = store::insert_inbound(db, mail, later);
  REQUIRE(stored);
  CHECK_FALSE(stored->duplicate);
  CHECK(stored->id > last_message);
  const std::string id = std::to_string(stored->id);
  CHECK(test::query_int(db, "SELECT count(*) FROM v_messages WHERE message_id = " + id +
                                " AND channel = 'imap' AND provider_message_id = '<a1@example.test>'"
                                " AND conversation_id = 'imap:a1' AND sender = 'ana@example.test' AND text = 'hola'"
                                " AND message_type = 'email' AND state = 'received' AND outcome = 'pending'")
            .value() == 1);
  CHECK(test::query_int(
            db, "SELECT n FROM metric_counts WHERE metric = 'messages' AND label1 = 'imap' AND label2 = 'pending'")
            .value() == 1);
  REQUIRE(store::write_cursor(db, "imap", "soporte@example.test", "1700000000:42", later));
  auto cursor = store::read_cursor(db, "imap", "soporte@example.test");
  REQUIRE(cursor);
  REQUIRE(*cursor);
  CHECK((*cursor)->value == "1700000000:42");
  CHECK(store::read_cursor(db, "gmail", "support@example.com").value().value().value == "123456");

  // Unique on (channel, provider_message_id) still: the same mail again is the stored row; the
  // same id on another channel is another message. The channel is still required.
  auto again = store::insert_inbound(db, mail, later + 1s);
  REQUIRE(again);
  CHECK(again->duplicate);
  CHECK(again->id == stored->id);
  CHECK_FALSE(test::exec(db, k_imap_insert));
  auto on_gmail =
      store::insert_inbound(db, {"gmail", mail.provider_message_id, "gm:a1", mail.sender, "hola", "{}"}, later + 2s);
  REQUIRE(on_gmail);
  CHECK_FALSE(on_gmail->duplicate);
  CHECK_FALSE(test::exec(
      db,
      "INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload)"
      " VALUES (NULL, 'm.null', 'c', 's', 't', 'x', '{}')"));
  CHECK_FALSE(test::exec(
      db,
      "INSERT INTO poll_cursors (channel, mailbox, cursor, started_at, updated_at) VALUES (NULL, 'm', 'c', 't', 't')"));
  CHECK_FALSE(test::exec(
      db,
      "INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload,"
      " state) VALUES ('imap', 'm.state', 'c', 's', 't', 'x', '{}', 'lost')"));  // other CHECKs stay

  // What points at the message and reads it: an attempt (0025's spend trigger reads the
  // inbox), an escalation, read back as staff read it.
  REQUIRE(store::record_attempt(db,
                                {.message_id = stored->id,
                                 .provider = "openai",
                                 .model = "gpt-4o-mini",
                                 .request_summary = "POST",
                                 .raw_output = "{}",
                                 .verdict = store::Verdict::review,
                                 .cost_usd = 0.001},
                                later));
  CHECK(test::query_int(db, "SELECT count(*) FROM spend_conversation_days WHERE conversation_id = 'imap:a1'").value() ==
        1);
  auto escalation = store::open_escalation(
      db, {stored->id, store::EscalationReason::review_flags, "{}", std::nullopt, std::nullopt}, later);
  REQUIRE(escalation);
  auto shown = store::show_escalation(db, *escalation);
  REQUIRE(shown);
  CHECK(shown->message.channel == "imap");
  CHECK(shown->message.provider_message_id == "<a1@example.test>");
  CHECK(shown->escalation.channel == "imap");
  CHECK(shown->attempts.size() == 1);
  const auto extended = store::verify_audit(db);
  REQUIRE(extended);
  CHECK_FALSE(extended->first_broken);
  CHECK(extended->events > after->events);
}
