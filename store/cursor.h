#pragma once
// Poll cursors: where a polling channel stands in a mailbox (migrations/0005). A cursor is
// written in the same transaction as the inbox rows it covers (open a store::transaction
// around store_inbound and write_cursor), so after a crash a poll is repeated, never
// skipped, and the inbox's uniqueness stores a repeated message once.

#include <optional>
#include <string>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"

namespace dispatchd::store {

struct Cursor {
  std::string value;  // Gmail: a historyId
  Time started_at{};  // when the channel first polled this mailbox
};

[[nodiscard]] Result<std::optional<Cursor>> read_cursor(Database& db, const std::string& channel,
                                                        const std::string& mailbox);

// Sets the cursor; the first write for (channel, mailbox) records `now` as started_at,
// later ones keep it.
[[nodiscard]] Result<void> write_cursor(Database& db, const std::string& channel, const std::string& mailbox,
                                        const std::string& value, Time now);

}  // namespace dispatchd::store
