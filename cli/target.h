#pragma once
// Which database (and catalog) a staff command works on: `--config FILE` (the daemon's own
// configuration: its database and catalog) or `--db FILE` (and `--catalog FILE` where a
// command needs one). The database must exist: a typo never creates an empty one.

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

struct Target {
  store::Database db;
  std::optional<config::Config> config;
};

std::expected<Target, std::string> open_target(const Args& args);

// --catalog FILE, else the configuration's catalog.
std::expected<catalog::Catalog, std::string> target_catalog(const Args& args, const Target& target);

}  // namespace dispatchd::cli
