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

}  // namespace dispatchd::test
