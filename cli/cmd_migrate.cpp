// dispatchctl migrate: applies the pending schema migrations to a database file.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/clock.h"
#include "config/config.h"
#include "store/migrations.h"

namespace dispatchd::cli {

int cmd_migrate(int argc, char** argv) {
  auto args = parse_args(argc, argv, 2, {{"db", true}, {"config", true}, {"migrations", true}});
  if (!args) return usage_error(args.error());
  std::string path;
  std::string folder = config::default_migrations_dir();
  if (const auto config_path = args->get("config")) {
    if (args->has("db")) return usage_error("give --config FILE or --db FILE, not both");
    auto loaded = config::load(*config_path);
    if (!loaded) return usage_error("bad configuration: " + loaded.error().front());
    path = loaded->database;
    folder = loaded->migrations_dir;
  } else if (const auto db_path = args->get("db")) {
    path = *db_path;
  } else {
    return usage_error("migrate needs --db FILE or --config FILE");
  }
  const auto migrations = store::load_migrations(args->get("migrations").value_or(folder), store::backend_of(path));
  if (!migrations) return usage_error(migrations.error().message);
  auto db = store::Database::open(path);
  if (!db) return usage_error(db.error().message);
  const auto result = store::migrate(*db, *migrations, store::format_time(now()));
  if (!result) {
    std::fprintf(stderr, "dispatchctl: migrate: %s\n", result.error().message.c_str());
    return k_exit_rejected;
  }
  for (const auto& name : result->applied) std::printf("applied %s\n", name.c_str());
  std::printf("%s: schema version %d%s\n", path.c_str(), result->version,
              result->applied.empty() ? " (up to date)" : "");
  return k_exit_ok;
}

}  // namespace dispatchd::cli
