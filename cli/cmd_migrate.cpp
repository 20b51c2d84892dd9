// dispatchctl migrate: applies the pending schema migrations to a database (a SQLite file, or
// PostgreSQL: migrations/postgresql/).
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/clock.h"
#include "cli/target.h"
#include "config/config.h"
#include "store/migrations.h"

namespace dispatchd::cli {

int cmd_migrate(int argc, char** argv) {
  auto args =
      parse_args(argc, argv, 2, {{"db", true}, {"db-password-env", true}, {"config", true}, {"migrations", true}});
  if (!args) return usage_error(args.error());
  if (!args->has("config") && !args->has("db")) return usage_error("migrate needs --db FILE|URI or --config FILE");
  auto choice = choose_target(*args);
  if (!choice) return usage_error(choice.error());
  const std::string& path = choice->database;
  const std::string folder = choice->config ? choice->config->migrations_dir : config::default_migrations_dir();
  const auto migrations = store::load_migrations(args->get("migrations").value_or(folder), store::backend_of(path));
  if (!migrations) return usage_error(migrations.error().message);
  // A PostgreSQL database is made by the server's owner (CREATE DATABASE); `create` only
  // creates a missing SQLite file.
  auto db = store::Database::open(path, store::Database::Mode::create, choice->open_options);
  if (!db) return usage_error(db.error().message);
  const auto result = store::migrate(*db, *migrations, store::format_time(now()));
  if (!result) {
    std::fprintf(stderr, "dispatchctl: migrate: %s\n", result.error().message.c_str());
    return k_exit_rejected;
  }
  for (const auto& name : result->applied) std::printf("applied %s\n", name.c_str());
  std::printf("%s: schema version %d%s\n", db->path().c_str(), result->version,
              result->applied.empty() ? " (up to date)" : "");
  return k_exit_ok;
}

}  // namespace dispatchd::cli
