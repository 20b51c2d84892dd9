// White-box: a statement's text parameter on both engines (store/internal/sql.h's Query).
#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "store/internal/sql.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;

TEST_CASE("database: an empty text binds as '' on both engines, whatever its pointer", "[store]") {
  test::TempDir dir;
  auto db = test::open_db(dir);
  REQUIRE(db);
  REQUIRE(test::exec(*db, "CREATE TABLE bound_texts (v TEXT NOT NULL)"));
  // A default string_view points nowhere; SQLite took a null pointer for NULL.
  for (const std::string_view empty : {std::string_view(), std::string_view(""), std::string_view("x", 0)}) {
    auto insert = store::Query::prepare(*db, "INSERT INTO bound_texts (v) VALUES (?)");
    REQUIRE(insert);
    insert->bind(1, empty);
    REQUIRE(insert->run());
  }
  CHECK(test::query_int(*db, "SELECT count(*) FROM bound_texts WHERE v = ''").value() == 3);
}
