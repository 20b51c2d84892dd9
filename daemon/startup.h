#pragma once
// What dispatchd does before it serves: check the configuration, and bring the store to a
// known state.

#include <expected>
#include <string>
#include <vector>

#include "config/config.h"
#include "store/database.h"
#include "store/inbox.h"

namespace dispatchd::daemon {

// Everything `dispatchd --check-config` reports beyond the file itself: the catalog loads
// and lints, the system prompt file is readable, the migrations folder loads, and every
// secret the enabled parts need is set. Empty when all is well.
std::vector<std::string> check_environment(const config::Config& config);

struct StoreReady {
  store::Database db;
  int schema_version = 0;
  std::vector<std::string> applied;         // migrations applied by this start
  std::vector<std::int64_t> unknown_sends;  // actions a previous run left in 'sending'
};

// Opens (creating) the database; applies pending migrations when
// `config.migrate_on_start`, else refuses a database that is behind the binary; turns
// actions left in 'sending' into 'unknown' (with their escalations), and hands back at
// once the messages the previous run of `worker` left in processing.
std::expected<StoreReady, std::string> prepare_store(const config::Config& config, const std::string& worker,
                                                     store::Time now);

}  // namespace dispatchd::daemon
