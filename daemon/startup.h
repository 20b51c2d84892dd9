#pragma once
// What dispatchd does before it serves: check the configuration, and bring the store to a
// known state.

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "config/config.h"
#include "connectors/registry.h"
#include "store/database.h"
#include "store/inbox.h"

namespace dispatchd::daemon {

// Everything `dispatchd --check-config` reports beyond the file itself: the channels'
// sections read (connectors::configure), the catalog loads and lints, the system prompt
// file is readable, the migrations folder loads, every secret the enabled parts need is set, and a PostgreSQL
// database's password resolves (config/database_password.h). Empty when all is well.
std::vector<std::string> check_environment(const config::Config& config);

// What each channel says of the catalog (connectors::Section::check_catalog: WhatsApp's
// template actions against the templates the database keeps), for --check-config:
// problems, and `notes` on what cannot be checked yet.
connectors::CatalogCheck check_channel_catalog(const config::Config& config,
                                               const std::vector<connectors::Configured>& channels,
                                               const catalog::Catalog& catalog);

// A `model` rule (connectors.<channel>.message_types) for a type of customer files (image,
// document, audio) that a configured provider (llm.provider, llm.fallbacks) cannot read: the
// model would read only the message's description, never the file (llm/media.h says which
// dialect reads what). One problem per channel, type and provider, saying what to do, for
// --check-config. Empty when every such rule can work.
std::vector<std::string> check_model_media(const config::Config& config,
                                           const std::vector<connectors::Configured>& channels);

struct StoreReady {
  store::Database db;
  int schema_version = 0;
  std::vector<std::string> applied;         // migrations applied by this start
  std::vector<std::int64_t> unknown_sends;  // actions a previous run left in 'sending'
};

// Opens (creating) the database, a PostgreSQL one with config::database_password; applies pending migrations when
// `config.migrate_on_start`, else refuses a database that is behind the binary; turns
// actions left in 'sending' into 'unknown' (with their escalations), and hands back at
// once the messages the previous run of `worker` left in processing.
// `lookup`: the channels whose interrupted sends are looked up instead (lookup_channels).
[[nodiscard]] std::expected<StoreReady, std::string> prepare_store(const config::Config& config,
                                                                   const std::string& worker, store::Time now,
                                                                   const std::vector<std::string>& lookup);

// Another connection to the database prepare_store opened (never creating it), for the
// reads the daemon runs off its loop (daemon/read_thread.h).
[[nodiscard]] std::expected<store::Database, std::string> open_read_connection(const config::Config& config);

// The descriptors dispatchd may hold at once with `config`: every listener connection, a
// connection per model permit plus the HTTP client's room for the channels, and the
// database's files and the process's own.
std::uint64_t open_files_needed(const config::Config& config);

// The soft open-files limit to ask for: `needed` when the soft limit is below it, never
// above `hard` and never lower than `soft` (systemd starts services at a soft 1,024 under a
// far higher hard limit).
std::uint64_t open_files_target(std::uint64_t soft, std::uint64_t hard, std::uint64_t needed);

// Raises the soft RLIMIT_NOFILE to open_files_target(...); returns the limit in force
// afterwards, or why it could not be read or set.
[[nodiscard]] std::expected<std::uint64_t, std::string> raise_open_files_limit(std::uint64_t needed);

}  // namespace dispatchd::daemon
