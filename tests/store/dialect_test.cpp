#include <catch2/catch.hpp>

#include <string>

#include "store/dialect.h"

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
