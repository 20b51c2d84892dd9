#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: moves an outbox row from one status to the next with its 'action'
// audit event; shared by the outbox (delivery) and the queue (staff decisions).

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/states.h"

namespace dispatchd::store {

struct ActionChange {
  ActionStatus from;
  ActionStatus to;
  std::optional<std::string> error;
  std::optional<std::string> provider_message_id;
};

// Returns the action's message id; refuses (naming the real status) when the row is not
// in `change.from`. REQUIRES: inside a transaction.
[[nodiscard]] Result<std::int64_t> move_action(Database& db, std::int64_t id, const ActionChange& change, Time now,
                                               const std::string& actor = "dispatchd");

}  // namespace dispatchd::store
