#include <catch2/catch.hpp>

#include <fstream>

#include "store/database.h"
#include "tests/store/temp_dir.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;

TEST_CASE("database: an error a failed system call caused names the system's reason", "[store][sqlite]") {
  test::TempDir dir;
  auto missing = store::Database::open(dir.file("no-such-folder/d.db"), store::Database::Mode::create);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == store::ErrorKind::io);
  CHECK_THAT(missing.error().message,
             Catch::Contains("unable to open database file") && Catch::Contains("(No such file or directory)"));

  auto db = store::Database::open(dir.file("d.db"), store::Database::Mode::create);
  REQUIRE(db);
  auto syntax = test::exec(*db, "SELEC 1");  // no system call failed: SQLite's message alone
  REQUIRE_FALSE(syntax);
  CHECK_THAT(syntax.error().message, Catch::Contains("syntax error") && !Catch::Contains("("));
}

TEST_CASE("database: SQLite's failures arrive as kinds a caller can branch on", "[store][sqlite]") {
  test::TempDir dir;
  auto db = store::Database::open(dir.file("d.db"), store::Database::Mode::create);
  REQUIRE(db);
  REQUIRE(test::exec(*db, "CREATE TABLE t (k TEXT PRIMARY KEY)"));
  REQUIRE(test::exec(*db, "INSERT INTO t VALUES ('a')"));

  SECTION("another writer holds the lock: busy, retryable") {
    auto other = store::Database::open(dir.file("d.db"), store::Database::Mode::existing);
    REQUIRE(other);
    REQUIRE(test::exec(*other, "PRAGMA busy_timeout=0"));
    REQUIRE(test::exec(*db, "BEGIN IMMEDIATE"));
    auto busy = test::exec(*other, "BEGIN IMMEDIATE");
    REQUIRE_FALSE(busy);
    CHECK(busy.error().kind == store::ErrorKind::busy);
    CHECK(busy.error().retryable());
    REQUIRE(test::exec(*db, "ROLLBACK"));
  }
  SECTION("a constraint the data breaks: refused, permanent") {
    auto twice = test::exec(*db, "INSERT INTO t VALUES ('a')");
    REQUIRE_FALSE(twice);
    CHECK(twice.error().kind == store::ErrorKind::refused);
    CHECK_FALSE(twice.error().retryable());
  }
  SECTION("a file that is not a database: corrupt, permanent") {
    { std::ofstream(dir.file("junk.db")) << std::string(4096, 'x'); }
    auto junk = store::Database::open(dir.file("junk.db"), store::Database::Mode::existing);
    REQUIRE_FALSE(junk);
    CHECK(junk.error().kind == store::ErrorKind::corrupt);
    CHECK_FALSE(junk.error().retryable());
  }
  SECTION("a missing file where one must exist: not_found") {
    auto missing = store::Database::open(dir.file("typo.db"), store::Database::Mode::existing);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().kind == store::ErrorKind::not_found);
  }
  SECTION("bad SQL: internal, permanent") {
    auto syntax = test::exec(*db, "SELEC 1");
    REQUIRE_FALSE(syntax);
    CHECK(syntax.error().kind == store::ErrorKind::internal);
  }
}

TEST_CASE("store errors: which kinds are retryable", "[store]") {
  using K = store::ErrorKind;
  const std::pair<K, bool> table[] = {{K::busy, true},       {K::io, true},       {K::full, true},
                                      {K::not_found, false}, {K::refused, false}, {K::schema, false},
                                      {K::corrupt, false},   {K::internal, false}};
  for (const auto& [kind, retryable] : table) {
    INFO(store::to_string(kind));
    CHECK(store::is_retryable(kind) == retryable);
  }
}
