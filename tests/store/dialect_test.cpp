#include <catch2/catch.hpp>

#include <string>

#include "store/dialect.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;

TEST_CASE("dialect: ? and ?N become PostgreSQL's $N outside literals, identifiers and comments", "[store]") {
  struct Row {
    std::string sql;
    std::string expected;
    int parameters;
  };
  const Row rows[] = {
      {"SELECT 1", "SELECT 1", 0},
      {"INSERT INTO t VALUES (?,?,?)", "INSERT INTO t VALUES ($1,$2,$3)", 3},
      {"SELECT * FROM t WHERE a = ?1 OR b = ?1", "SELECT * FROM t WHERE a = $1 OR b = $1", 1},
      // A bare ? takes one more than the largest number before it (SQLite's rule).
      {"SELECT ?2, ?, ?1, ?", "SELECT $2, $3, $1, $4", 4},
      {"SELECT ?12", "SELECT $12", 12},
      {"SELECT '?' || ?", "SELECT '?' || $1", 1},
      {"SELECT 'it''s ?' , ?", "SELECT 'it''s ?' , $1", 1},
      {"SELECT \"odd?name\" FROM t WHERE x = ?", "SELECT \"odd?name\" FROM t WHERE x = $1", 1},
      {"SELECT ? -- why? because\n, ?", "SELECT $1 -- why? because\n, $2", 2},
      {"SELECT /* a ? here */ ?", "SELECT /* a ? here */ $1", 1},
      {"SELECT ? - 1, 2/?", "SELECT $1 - 1, 2/$2", 2},
      // Unclosed: the rest is the literal, nothing in it is a parameter.
      {"SELECT ?, 'open ?", "SELECT $1, 'open ?", 1},
      {"SELECT ? /* open ?", "SELECT $1 /* open ?", 1},
      {"SELECT ? -- last line ?", "SELECT $1 -- last line ?", 1},
      {"", "", 0},
  };
  for (const auto& row : rows) {
    INFO(row.sql);
    const auto out = store::to_postgresql_placeholders(row.sql);
    CHECK(out.text == row.expected);
    CHECK(out.parameters == row.parameters);
  }
}

TEST_CASE("dialect: PostgreSQL's SQLSTATE codes map to the store's error kinds", "[store]") {
  using store::ErrorKind;
  struct Row {
    const char* sqlstate;
    ErrorKind kind;
  };
  const Row rows[] = {
      {"40001", ErrorKind::busy},                                   // serialization_failure
      {"40P01", ErrorKind::busy},                                   // deadlock_detected
      {"55P03", ErrorKind::busy},                                   // lock_not_available (lock_timeout)
      {"08000", ErrorKind::io},                                     // connection_exception
      {"08006", ErrorKind::io},                                     // connection_failure
      {"08P01", ErrorKind::io},                                     // protocol_violation
      {"57P01", ErrorKind::io},                                     // admin_shutdown
      {"57P02", ErrorKind::io},                                     // crash_shutdown
      {"57P03", ErrorKind::io},                                     // cannot_connect_now
      {"53100", ErrorKind::full},                                   // disk_full
      {"23505", ErrorKind::refused},                                // unique_violation
      {"23503", ErrorKind::refused},                                // foreign_key_violation
      {"23502", ErrorKind::refused},                                // not_null_violation
      {"23514", ErrorKind::refused},                                // check_violation
      {"XX001", ErrorKind::corrupt},                                // data_corrupted
      {"XX002", ErrorKind::corrupt},                                // index_corrupted
      {"XX000", ErrorKind::internal},                               // internal_error
      {"42601", ErrorKind::internal},                               // syntax_error
      {"42P01", ErrorKind::internal},                               // undefined_table
      {"57014", ErrorKind::internal},                               // query_canceled
      {"53200", ErrorKind::internal},                               // out_of_memory
      {"40002", ErrorKind::internal},                               // transaction_integrity_constraint_violation
      {"", ErrorKind::internal},      {"08", ErrorKind::internal},  // not a code
  };
  for (const auto& row : rows) {
    INFO(row.sqlstate);
    CHECK(store::kind_of_sqlstate(row.sqlstate) == row.kind);
  }
}

TEST_CASE("dialect: each engine's fragment is the text its statements were written with", "[store]") {
  using store::Backend;
  namespace sql = store::sql;
  struct Row {
    std::string built;
    std::string expected;
  };
  const Row rows[] = {
      {sql::json_text(Backend::sqlite, "a.detail", "action"), "json_extract(a.detail, '$.action')"},
      {sql::json_text(Backend::postgresql, "a.detail", "action"), "(a.detail::jsonb ->> 'action')"},
      {sql::json_integer(Backend::sqlite, "detail", "escalation"), "json_extract(detail, '$.escalation')"},
      {sql::json_integer(Backend::postgresql, "detail", "escalation"), "(detail::jsonb ->> 'escalation')::bigint"},
      {sql::json_integers(Backend::sqlite, "?1", "j"), "json_each(?1) AS j"},
      {sql::json_integers(Backend::postgresql, "?1", "j"),
       "(SELECT value::bigint AS value, key FROM jsonb_array_elements_text(?1::jsonb) WITH ORDINALITY AS e(value, key))"
       " AS j"},
      {sql::json_integer_array(Backend::sqlite, "id", "id"), "json_group_array(id)"},
      {sql::json_integer_array(Backend::postgresql, "id", "id"), "coalesce(json_agg(id ORDER BY id)::text, '[]')"},
      {sql::contains(Backend::sqlite, "body", "?2"), "instr(body, ?2) > 0"},
      {sql::contains(Backend::postgresql, "body", "?2"), "strpos(body, ?2) > 0"},
      {sql::table_exists(Backend::sqlite, "audit_anchor"),
       "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'audit_anchor'"},
      {sql::column_exists(Backend::sqlite, "audit", "detail_digest"),
       "SELECT count(*) FROM pragma_table_info('audit') WHERE name = 'detail_digest'"},
  };
  for (const auto& row : rows) CHECK(row.built == row.expected);
  // The placeholders in a fragment survive the translation to $N.
  CHECK(store::to_postgresql_placeholders(sql::json_integers(Backend::postgresql, "?1", "j")).parameters == 1);
}

TEST_CASE("dialect: the fragments mean the same on the engine the run uses", "[store]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const store::Backend b = db.backend();
  namespace sql = store::sql;
  const auto one = [&](const std::string& query) {
    auto value = test::query_int(db, query);
    INFO(query);
    REQUIRE(value);
    return *value;
  };
  const std::string ids = "'[3, 1, 2]'";
  CHECK(one("SELECT sum(value) FROM " + sql::json_integers(b, ids, "j")) == 6);
  CHECK(one("SELECT value FROM " + sql::json_integers(b, ids, "j") + " ORDER BY key LIMIT 1") == 3);
  CHECK(one("SELECT count(*) FROM inbox WHERE id IN (SELECT value FROM " + sql::json_integers(b, "'[]'", "j") + ")") ==
        0);
  const std::string detail = R"('{"escalation": 42, "status": "sent"}')";
  CHECK(one("SELECT " + sql::json_integer(b, detail, "escalation") + " + 1") == 43);
  CHECK(one("SELECT CASE WHEN " + sql::json_text(b, detail, "status") + " = 'sent' THEN 1 ELSE 0 END") == 1);
  CHECK(one("SELECT CASE WHEN " + sql::json_text(b, detail, "missing") + " IS NULL THEN 1 ELSE 0 END") == 1);
  CHECK(one("SELECT CASE WHEN " + sql::contains(b, "'customer 34600111222 wrote'", "'600111'") +
            " THEN 1 ELSE 0 END") == 1);
  CHECK(one("SELECT CASE WHEN " + sql::contains(b, "'customer'", "'600111'") + " THEN 1 ELSE 0 END") == 0);
  // The array an aggregate builds reads back through json_integers, in its order.
  const std::string agg = "(SELECT " + sql::json_integer_array(b, "id", "id") +
                          " FROM (SELECT 7 AS id UNION ALL SELECT 5 ORDER BY id) AS s)";
  CHECK(one("SELECT value FROM " + sql::json_integers(b, agg, "j") + " ORDER BY key LIMIT 1") == 5);
  CHECK(one("SELECT CASE WHEN " + sql::json_integer_array(b, "id", "id") +
            " = '[]' THEN 1 ELSE 0 END FROM (SELECT 1 AS id WHERE 1 = 0) AS s") == 1);
  CHECK(one(sql::table_exists(b, "audit_anchor")) == 1);
  CHECK(one(sql::table_exists(b, "no_such_table")) == 0);
  CHECK(one(sql::column_exists(b, "audit", "detail_digest")) == 1);
  CHECK(one(sql::column_exists(b, "audit", "no_such_column")) == 0);
}
