#pragma once
// A migrated database in a temporary folder, for store tests.

#include <catch2/catch.hpp>
#include <chrono>

#include "store/inbox.h"
#include "store/migrations.h"
#include "tests/store/temp_dir.h"
#include "tests/test_util.h"

namespace dispatchd::test {

inline const store::Time k_t0 = std::chrono::sys_days{std::chrono::November / 30 / 2026} + std::chrono::hours(12);

// Opens `dir`/d.db and applies the shipped migrations.
inline store::Database migrated_db(const TempDir& dir) {
  auto db = store::Database::open(dir.file("d.db"));
  REQUIRE(db);
  auto migrations = store::load_migrations(source_path("migrations"));
  REQUIRE(migrations);
  REQUIRE(store::migrate(*db, *migrations, store::format_time(k_t0)));
  return std::move(*db);
}

// Opens `dir`/d.db and applies every shipped migration but `version`: a database as an older
// binary left that migration's tables, for the tests of an upgrade (then migrate_all). The
// later ones are applied too, because today's writers (insert_inbound's audit row with its
// salted digest, 0013) need their columns; an upgrade test must not depend on them.
inline store::Database db_before_migration(const TempDir& dir, int version) {
  auto db = store::Database::open(dir.file("d.db"));
  REQUIRE(db);
  auto migrations = store::load_migrations(source_path("migrations"));
  REQUIRE(migrations);
  std::erase_if(*migrations, [version](const store::Migration& m) { return m.version == version; });
  REQUIRE(store::migrate(*db, *migrations, store::format_time(k_t0)));
  return std::move(*db);
}

// Applies the shipped migrations still pending, recorded as applied at `now`.
inline void migrate_all(store::Database& db, store::Time now) {
  auto migrations = store::load_migrations(source_path("migrations"));
  REQUIRE(migrations);
  REQUIRE(store::migrate(db, *migrations, store::format_time(now)));
}

}  // namespace dispatchd::test
