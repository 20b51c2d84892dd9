#include "daemon/startup.h"

#include <fstream>

#include "catalog/catalog.h"
#include "config/secrets.h"
#include "store/migrations.h"
#include "store/outbox.h"
#include "validator/lint.h"

namespace dispatchd::daemon {

std::vector<std::string> check_environment(const config::Config& c) {
  std::vector<std::string> problems;
  auto catalog = catalog::Catalog::load_file(c.catalog);
  if (!catalog) {
    for (const auto& p : catalog.error()) problems.push_back("catalog: " + p.to_string());
  } else {
    for (const auto& p : validator::lint_examples(*catalog)) problems.push_back("catalog: " + p.to_string());
  }
  if (c.system_prompt_file && !std::ifstream(*c.system_prompt_file)) {
    problems.push_back("system_prompt_file: cannot read " + *c.system_prompt_file);
  }
  if (auto migrations = store::load_migrations(c.migrations_dir); !migrations) {
    problems.push_back("migrations: " + migrations.error().message);
  }
  std::vector<std::pair<std::string, std::string>> secrets = {{"llm.api_key_env", c.llm.api_key_env}};
  if (c.whatsapp.enabled) {
    secrets.insert(secrets.end(), {{"connectors.whatsapp.access_token_env", c.whatsapp.access_token_env},
                                   {"connectors.whatsapp.app_secret_env", c.whatsapp.app_secret_env},
                                   {"connectors.whatsapp.verify_token_env", c.whatsapp.verify_token_env}});
  }
  if (c.gmail.enabled) {
    secrets.insert(secrets.end(), {{"connectors.gmail.client_id_env", c.gmail.client_id_env},
                                   {"connectors.gmail.client_secret_env", c.gmail.client_secret_env},
                                   {"connectors.gmail.refresh_token_env", c.gmail.refresh_token_env}});
  }
  if (!c.staff_token_env.empty()) secrets.emplace_back("staff.token_env", c.staff_token_env);
  for (const auto& [key, name] : secrets) {
    if (auto secret = config::read_secret(name); !secret) problems.push_back(key + ": " + secret.error());
  }
  return problems;
}

std::expected<StoreReady, std::string> prepare_store(const config::Config& config, const std::string& worker,
                                                     store::Time now) {
  auto migrations = store::load_migrations(config.migrations_dir);
  if (!migrations) return std::unexpected(migrations.error().message);
  auto db = store::Database::open(config.database);
  if (!db) return std::unexpected(db.error().message);
  StoreReady ready{std::move(*db), 0, {}, {}};
  if (config.migrate_on_start) {
    auto result = store::migrate(ready.db, *migrations, store::format_time(now));
    if (!result) return std::unexpected("migrations: " + result.error().message);
    ready.schema_version = result->version;
    ready.applied = std::move(result->applied);
  } else {
    auto version = store::schema_version(ready.db);
    const int latest = migrations->empty() ? 0 : migrations->back().version;
    if (!version || *version != latest) {
      return std::unexpected("the database is at schema version " + std::to_string(version.value_or(0)) +
                             ", this dispatchd needs " + std::to_string(latest) +
                             " and migrations.apply_on_start is false: run dispatchctl migrate --config FILE");
    }
    ready.schema_version = latest;
  }
  // Gmail looks its interrupted sends up by our Message-ID (the outbox pump asks it at
  // start); WhatsApp cannot, so its interrupted sends are delivery_unknown at once.
  std::vector<std::string> lookup;
  if (config.gmail.enabled) lookup.emplace_back("gmail");
  auto unknown = store::recover_sending(ready.db, now, lookup);
  if (!unknown) return std::unexpected("recovering interrupted sends: " + unknown.error().message);
  ready.unknown_sends = std::move(*unknown);
  if (auto released = store::release_leases(ready.db, worker); !released) {
    return std::unexpected("releasing the previous run's leases: " + released.error().message);
  }
  return ready;
}

}  // namespace dispatchd::daemon
