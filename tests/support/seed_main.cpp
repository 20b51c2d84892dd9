// dispatchd_seed DB [START]: migrates DB and writes the seed history into it (tests/support/seed.h).
// DB is a SQLite file or a postgresql:// URI (an existing, empty database; the password from
// PGPASSWORD or ~/.pgpass, as libpq reads them). START is "YYYY-MM-DD" (default 2026-11-30);
// the history spans that day and the next.
#include <chrono>
#include <cstdio>
#include <sstream>

#include "config/config.h"
#include "store/migrations.h"
#include "tests/support/seed.h"

int main(int argc, char** argv) {
  using namespace dispatchd;
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: dispatchd_seed DB [YYYY-MM-DD]\n");
    return 2;
  }
  std::chrono::sys_days day = std::chrono::sys_days{std::chrono::November / 30 / 2026};
  if (argc == 3) {
    std::istringstream in(argv[2]);
    std::chrono::year_month_day ymd{};
    int y = 0;
    unsigned m = 0, d = 0;
    char dash1 = 0, dash2 = 0;
    in >> y >> dash1 >> m >> dash2 >> d;
    ymd = std::chrono::year{y} / std::chrono::month{m} / std::chrono::day{d};
    if (!in || dash1 != '-' || dash2 != '-' || !ymd.ok()) {
      std::fprintf(stderr, "dispatchd_seed: START must be YYYY-MM-DD\n");
      return 2;
    }
    day = ymd;
  }
  const store::Time start = day + std::chrono::hours(9);
  auto db = store::Database::open(argv[1]);
  if (!db) return std::fprintf(stderr, "dispatchd_seed: %s\n", db.error().message.c_str()), 1;
  auto migrations = store::load_migrations(config::default_migrations_dir(), db->backend());
  if (!migrations) return std::fprintf(stderr, "dispatchd_seed: %s\n", migrations.error().message.c_str()), 1;
  if (auto ok = store::migrate(*db, *migrations, store::format_time(start)); !ok) {
    return std::fprintf(stderr, "dispatchd_seed: %s\n", ok.error().message.c_str()), 1;
  }
  if (auto ok = test::seed_history(*db, start); !ok)
    return std::fprintf(stderr, "dispatchd_seed: %s\n", ok.error().c_str()), 1;
  std::printf("%s: seeded\n", db->path().c_str());
  return 0;
}
