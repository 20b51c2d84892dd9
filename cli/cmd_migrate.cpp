// dispatchctl migrate: applies the pending schema migrations to a database file.
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli/args.h"
#include "store/migrations.h"

namespace dispatchd::cli {
namespace {

// The installed folder when it exists (cmake --install), else the source tree's, so that
// a build-tree dispatchctl works without installing.
std::string default_migrations_dir() {
  if (std::filesystem::is_directory(DISPATCHD_INSTALLED_MIGRATIONS)) return DISPATCHD_INSTALLED_MIGRATIONS;
  return DISPATCHD_SOURCE_MIGRATIONS;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace

int cmd_migrate(int argc, char** argv) {
  auto args = parse_args(argc, argv, 2, {{"db", true}, {"migrations", true}});
  if (!args) return usage_error(args.error());
  const auto path = args->get("db");
  if (!path) return usage_error("migrate needs --db FILE");
  const auto migrations = store::load_migrations(args->get("migrations").value_or(default_migrations_dir()));
  if (!migrations) return usage_error(migrations.error());
  auto db = store::Database::open(*path);
  if (!db) return usage_error(db.error());
  const auto result = store::migrate(*db, *migrations, utc_now());
  if (!result) {
    std::fprintf(stderr, "dispatchctl: migrate: %s\n", result.error().c_str());
    return k_exit_rejected;
  }
  for (const auto& name : result->applied) std::printf("applied %s\n", name.c_str());
  std::printf("%s: schema version %d%s\n", path->c_str(), result->version,
              result->applied.empty() ? " (up to date)" : "");
  return k_exit_ok;
}

}  // namespace dispatchd::cli
