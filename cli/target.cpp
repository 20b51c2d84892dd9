#include "cli/target.h"

#include "config/database_password.h"

namespace dispatchd::cli {

std::vector<OptionSpec> target_options() {
  return {{"config", true}, {"db", true}, {"db-password-env", true}, {"catalog", true}};
}

std::expected<TargetChoice, std::string> choose_target(const Args& args) {
  const auto config_path = args.get("config");
  const auto db_path = args.get("db");
  if (config_path && db_path) return std::unexpected("give --config FILE or --db FILE, not both");
  if (config_path && args.has("db-password-env"))
    return std::unexpected("--db-password-env goes with --db; with --config, database_password_env says it");
  TargetChoice choice;
  std::string password_env;
  if (config_path) {
    auto loaded = config::load(*config_path);
    if (!loaded) {
      const auto& problems = loaded.error();
      return std::unexpected(
          "bad configuration: " + problems.front() +
          (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more; see dispatchd --check-config)"
                               : ""));
    }
    choice.database = loaded->database;
    password_env = loaded->database_password_env;
    choice.config = std::move(*loaded);
  } else if (db_path) {
    choice.database = *db_path;
    password_env = args.get("db-password-env").value_or("");
    if (!password_env.empty() && store::backend_of(choice.database) != store::Backend::postgresql)
      return std::unexpected("--db-password-env is for a postgresql:// database; a SQLite file needs no password");
  } else {
    return std::unexpected("which database? give --config FILE or --db FILE");
  }
  // --db URI is checked like the configuration's: a password on the command line is seen by
  // every user of the machine (ps) and kept in shell histories.
  if (store::backend_of(choice.database) == store::Backend::postgresql && config::uri_has_password(choice.database))
    return std::unexpected(
        "the database URI holds a password; give it in PGPASSWORD, ~/.pgpass or --db-password-env NAME instead");
  auto password = config::resolve_database_password(choice.database, password_env, config::system_sources());
  if (!password) return std::unexpected(password.error().message);
  choice.open_options.password = std::move(password->value);
  return choice;
}

std::expected<Target, std::string> open_target(const Args& args) {
  auto choice = choose_target(args);
  if (!choice) return std::unexpected(std::move(choice.error()));
  auto db = store::Database::open(choice->database, store::Database::Mode::existing, choice->open_options);
  if (!db) return std::unexpected(db.error().message);
  return Target{std::move(*db), std::move(choice->config)};
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
