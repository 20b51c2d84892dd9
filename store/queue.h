#pragma once
// The escalation queue's state machine: open -> claimed -> resolved | dismissed
// (open items may also be resolved or dismissed directly). Each step appends an audit
// event in the same transaction. Refusals are values naming the reason:
//   - claiming an item another person holds names the holder
//   - a resolved or dismissed item can be neither claimed nor resolved again
//   - only the holder resolves a claimed item

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "store/database.h"
#include "store/inbox.h"

namespace dispatchd::store {

struct NewEscalation {
  std::int64_t message_id = 0;
  std::string reason;                          // a reason code of v_escalations
  std::string detail;                          // compact JSON: attempts, errors, ...
  std::optional<std::string> proposed_action;  // compact JSON
};

std::expected<std::int64_t, std::string> open_escalation(Database& db, const NewEscalation& e, Time now);

std::expected<void, std::string> claim_escalation(Database& db, std::int64_t id, const std::string& who, Time now);

// `status` is "resolved" or "dismissed".
std::expected<void, std::string> close_escalation(Database& db, std::int64_t id, const std::string& who,
                                                  const std::string& status, const std::string& resolution, Time now);

}  // namespace dispatchd::store
