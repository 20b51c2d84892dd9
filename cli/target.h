#pragma once
// Which database (and catalog) a staff command works on: `--config FILE` (the daemon's own
// configuration: its database, password and catalog) or `--db TARGET` (and `--catalog FILE`
// where a command needs one). TARGET is a SQLite file or a postgresql:// URI (without the
// password). The database must exist: a typo never creates an empty one.
//
// The PostgreSQL password comes from config::database_password: with --config, the
// credential database_password or the configuration's database_password_env; with --db, the
// credential or `--db-password-env NAME`; else libpq's own PGPASSWORD or ~/.pgpass.

#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "cli/args.h"
#include "config/config.h"
#include "store/database.h"

namespace dispatchd::cli {

// The options every staff command accepts for choosing its target.
std::vector<OptionSpec> target_options();

// The database a command names, not opened yet: what `migrate` (which creates) and
// open_target (which does not) share.
struct TargetChoice {
  std::string database;  // a SQLite path or a postgresql:// URI
  store::OpenOptions open_options;
  std::optional<config::Config> config;
};

[[nodiscard]] std::expected<TargetChoice, std::string> choose_target(const Args& args);

struct Target {
  store::Database db;
  std::optional<config::Config> config;
};

[[nodiscard]] std::expected<Target, std::string> open_target(const Args& args);

// --catalog FILE, else the configuration's catalog.
[[nodiscard]] std::expected<catalog::Catalog, std::string> target_catalog(const Args& args, const Target& target);

}  // namespace dispatchd::cli
