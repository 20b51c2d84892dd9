#include "cli/target.h"

namespace dispatchd::cli {

std::vector<OptionSpec> target_options() { return {{"config", true}, {"db", true}, {"catalog", true}}; }

std::expected<Target, std::string> open_target(const Args& args) {
  const auto config_path = args.get("config");
  const auto db_path = args.get("db");
  if (config_path && db_path) return std::unexpected("give --config FILE or --db FILE, not both");
  std::optional<config::Config> config;
  std::string path;
  if (config_path) {
    auto loaded = config::load(*config_path);
    if (!loaded) {
      const auto& problems = loaded.error();
      return std::unexpected(
          "bad configuration: " + problems.front() +
          (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more; see dispatchd --check-config)"
                               : ""));
    }
    path = loaded->database;
    config = std::move(*loaded);
  } else if (db_path) {
    path = *db_path;
  } else {
    return std::unexpected("which database? give --config FILE or --db FILE");
  }
  auto db = store::Database::open(path, store::Database::Mode::existing);
  if (!db) return std::unexpected(db.error().message);
  return Target{std::move(*db), std::move(config)};
}

std::expected<catalog::Catalog, std::string> target_catalog(const Args& args, const Target& target) {
  std::string path;
  if (const auto given = args.get("catalog"))
    path = *given;
  else if (target.config)
    path = target.config->catalog;
  else
    return std::unexpected("this command needs the catalog: give --catalog FILE or --config FILE");
  auto catalog = catalog::Catalog::load_file(path);
  if (!catalog) return std::unexpected("bad catalog: " + catalog.error().front().to_string());
  return std::move(*catalog);
}

}  // namespace dispatchd::cli
