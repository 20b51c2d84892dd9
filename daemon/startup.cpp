#include "daemon/startup.h"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "catalog/catalog.h"
#include "config/database_password.h"
#include "config/secrets.h"
#include "daemon/http_server.h"
#include "llm/media.h"
#include "store/instances.h"
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
  if (auto migrations = store::load_migrations(c.migrations_dir, store::backend_of(c.database)); !migrations) {
    problems.push_back("migrations: " + migrations.error().message);
  }
  std::vector<std::pair<std::string, std::string>> secrets = {{"llm.api_key_env", c.llm.api_key_env}};
  for (std::size_t i = 0; i < c.llm.fallbacks.size(); ++i)
    secrets.emplace_back("llm.fallbacks/" + std::to_string(i) + "/api_key_env", c.llm.fallbacks[i].api_key_env);
  if (auto channels = connectors::configure(c); !channels) {
    problems.insert(problems.end(), channels.error().begin(), channels.error().end());
  } else {
    for (const auto& [kind, section] : *channels) {
      if (!section->enabled()) continue;
      for (auto& [key, name] : section->secrets()) secrets.emplace_back(std::move(key), std::move(name));
    }
  }
  if (!c.staff_token_env.empty()) secrets.emplace_back("staff.token_env", c.staff_token_env);
  if (c.media.enabled && c.media.transcription)
    secrets.emplace_back("media.transcription.api_key_env", c.media.transcription->api_key_env);
  if (auto password = config::database_password(c); !password)
    problems.push_back("database: " + password.error().message);
  for (const auto& [key, name] : secrets) {
    if (auto secret = config::read_secret(name); !secret) problems.push_back(key + ": " + secret.error());
  }
  return problems;
}

std::vector<std::string> check_model_media(const config::Config& config,
                                           const std::vector<connectors::Configured>& channels) {
  std::vector<std::pair<std::string, std::string>> providers = {{"llm.provider", config.llm.provider}};
  for (std::size_t i = 0; i < config.llm.fallbacks.size(); ++i)
    providers.emplace_back("llm.fallbacks/" + std::to_string(i), config.llm.fallbacks[i].provider);
  static constexpr std::array<std::pair<std::string_view, common::MediaKind>, 3> k_file_types = {
      {{"image", common::MediaKind::image},
       {"document", common::MediaKind::document},
       {"audio", common::MediaKind::audio}}};
  std::vector<std::string> problems;
  for (const auto& [kind, section] : channels) {
    if (!section->enabled()) continue;
    for (const auto& [type, media_kind] : k_file_types) {
      const auto rule = section->message_types().find(std::string(type));
      if (rule == section->message_types().end() || rule->second.action != common::TypeAction::model) continue;
      // Transcribed audio reaches the model as its transcript, whatever the provider reads.
      if (media_kind == common::MediaKind::audio && config.media.enabled && config.media.transcription) continue;
      for (const auto& [key, name] : providers) {
        const auto provider = llm::parse_provider_kind(name);
        if (!provider || llm::reads_kind(*provider, media_kind)) continue;
        std::string readers;
        for (const auto other : {llm::ProviderKind::openai, llm::ProviderKind::gemini, llm::ProviderKind::anthropic}) {
          if (llm::reads_kind(other, media_kind))
            readers += (readers.empty() ? "" : " or ") + std::string(to_string(other));
        }
        problems.push_back("connectors." + std::string(kind->name) + ".message_types." + std::string(type) +
                           ": `model`, but the " + name + " provider (" + key + ") cannot read " + std::string(type) +
                           " files, so the model would see only the message's description: set the type to "
                           "\"escalate\" or \"ignore\", or configure a provider that reads them (" +
                           readers + ")" +
                           (media_kind == common::MediaKind::audio ? ", or transcribe it (media.transcription)" : ""));
      }
    }
  }
  return problems;
}

namespace {

// The configured database, with its password (config/database_password.h).
std::expected<store::Database, std::string> open_configured(const config::Config& config, store::Database::Mode mode) {
  auto password = config::database_password(config);
  if (!password) return std::unexpected("database: " + password.error().message);
  auto db = store::Database::open(config.database, mode, {.password = password->value});
  if (!db) return std::unexpected(db.error().message);
  return std::move(*db);
}

}  // namespace

connectors::CatalogCheck check_channel_catalog(const config::Config& config,
                                               const std::vector<connectors::Configured>& channels,
                                               const catalog::Catalog& catalog) {
  connectors::CatalogCheck out;
  const connectors::OpenDatabase open = [&config] { return open_configured(config, store::Database::Mode::existing); };
  for (const auto& [kind, section] : channels) {
    auto check = section->check_catalog(catalog, open);
    out.problems.insert(out.problems.end(), check.problems.begin(), check.problems.end());
    out.notes.insert(out.notes.end(), check.notes.begin(), check.notes.end());
  }
  return out;
}

std::expected<store::Database, std::string> open_read_connection(const config::Config& config) {
  auto db = open_configured(config, store::Database::Mode::existing);
  if (!db) return std::unexpected("the read connection: " + db.error());
  return db;
}

std::expected<StoreReady, std::string> prepare_store(const config::Config& config, const std::string& worker,
                                                     store::Time now, const std::vector<std::string>& lookup) {
  auto migrations = store::load_migrations(config.migrations_dir, store::backend_of(config.database));
  if (!migrations) return std::unexpected(migrations.error().message);
  auto db = open_configured(config, store::Database::Mode::create);
  if (!db) return std::unexpected(db.error());
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
  // A channel that can look its interrupted sends up (Gmail, by our Message-ID) is asked at
  // start by the outbox pump; the others' interrupted sends are delivery_unknown at once.
  if (ready.db.backend() == store::Backend::postgresql) {
    // Several instances may share the database: only this instance's own sends and leases
    // are its previous run's (store/instances.h); the others' are in flight.
    auto recovered = store::start_instance(ready.db, worker, now, lookup);
    if (!recovered) return std::unexpected("recovering this instance's previous run: " + recovered.error().message);
    ready.unknown_sends = std::move(recovered->unknown_actions);
    return ready;
  }
  auto unknown = store::recover_sending(ready.db, now, lookup);
  if (!unknown) return std::unexpected("recovering interrupted sends: " + unknown.error().message);
  ready.unknown_sends = std::move(*unknown);
  if (auto released = store::release_leases(ready.db, worker); !released) {
    return std::unexpected("releasing the previous run's leases: " + released.error().message);
  }
  return ready;
}

std::uint64_t open_files_needed(const config::Config& config) {
  constexpr std::uint64_t k_client_room = 256;  // the channels' and the notifier's connections
  constexpr std::uint64_t k_own = 64;           // the database, its WAL, the logs, the loop's own
  return HttpLimits{}.max_connections + static_cast<std::uint64_t>(config.llm.max_concurrency) + k_client_room + k_own;
}

std::uint64_t open_files_target(std::uint64_t soft, std::uint64_t hard, std::uint64_t needed) {
  if (soft >= needed) return soft;
  return std::min(hard, needed);
}

std::expected<std::uint64_t, std::string> raise_open_files_limit(std::uint64_t needed) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return std::unexpected(std::string("getrlimit: ") + std::strerror(errno));
  const auto target = static_cast<rlim_t>(open_files_target(limit.rlim_cur, limit.rlim_max, needed));
  if (target == limit.rlim_cur) return limit.rlim_cur;
  limit.rlim_cur = target;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return std::unexpected(std::string("setrlimit: ") + std::strerror(errno));
  return target;
}

}  // namespace dispatchd::daemon
