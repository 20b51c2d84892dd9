#include <catch2/catch.hpp>

#include "store/database.h"
#include "tests/store/temp_dir.h"

using namespace dispatchd;

TEST_CASE("database: an error a failed system call caused names the system's reason", "[store]") {
  test::TempDir dir;
  auto missing = store::Database::open(dir.file("no-such-folder/d.db"), store::Database::Mode::create);
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error(),
             Catch::Contains("unable to open database file") && Catch::Contains("(No such file or directory)"));

  auto db = store::Database::open(dir.file("d.db"), store::Database::Mode::create);
  REQUIRE(db);
  auto syntax = db->exec("SELEC 1");  // no system call failed: SQLite's message alone
  REQUIRE_FALSE(syntax);
  CHECK_THAT(syntax.error(), Catch::Contains("syntax error") && !Catch::Contains("("));
}
