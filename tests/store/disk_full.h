#pragma once
// A full disk for the tests of a lost commit, on either backend (tests/store/store_fixture.h):
// a trigger breaks a deferred foreign key, so the transaction's COMMIT fails as a write to a
// full disk does.

#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

namespace dispatchd::test {

// From now on, every COMMIT after `event_on_table` ("UPDATE OF status ON actions") fails;
// `when`, unless empty, is a condition on NEW. free_disk(db, table) takes it away.
inline void fill_disk(store::Database& db, std::string_view event_on_table, std::string_view when = {}) {
  REQUIRE(test::exec(db, "CREATE TABLE doomed (x INTEGER REFERENCES inbox (id) DEFERRABLE INITIALLY DEFERRED)"));
  const std::string on(event_on_table);
  if (on_postgresql()) {
    REQUIRE(test::exec(db,
                       "CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS"
                       " $$ BEGIN INSERT INTO doomed VALUES (-1); RETURN NULL; END $$"));
    REQUIRE(test::exec(db, "CREATE TRIGGER disk_full AFTER " + on + " FOR EACH ROW" +
                               (when.empty() ? "" : " WHEN (" + std::string(when) + ")") +
                               " EXECUTE FUNCTION disk_full()"));
    return;
  }
  REQUIRE(test::exec(db, "CREATE TRIGGER disk_full AFTER " + on + (when.empty() ? "" : " WHEN " + std::string(when)) +
                             " BEGIN INSERT INTO doomed VALUES (-1); END"));
}
inline void free_disk(store::Database& db, std::string_view table) {
  REQUIRE(test::exec(
      db, on_postgresql() ? "DROP TRIGGER disk_full ON " + std::string(table) : std::string("DROP TRIGGER disk_full")));
}

}  // namespace dispatchd::test
