#pragma once
// The escalation queue's state machine: open -> claimed -> resolved | dismissed
// (open items may also be resolved or dismissed directly). Each step appends an audit
// event in the same transaction. Refusals are values naming the reason:
//   - claiming an item another person holds names the holder
//   - a resolved or dismissed item can be neither claimed nor resolved again
//   - only the holder resolves a claimed item
//
// An escalation may carry a proposal: a valid action that needs staff approval, stored as
// an outbox row in status 'proposed'. Approving moves that row to 'approved' (the daemon
// sends it, after what was queued to the counterpart before: store::begin_send); editing,
// replying or dismissing rejects it. Checking an edited action against the catalog is the
// caller's job (staff/), before it calls resolve_with_action.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/outbox.h"

namespace dispatchd::store {

struct NewEscalation {
  std::int64_t message_id = 0;
  EscalationReason reason = EscalationReason::contract_failed;
  std::string detail;                          // compact JSON: attempts, errors, ...
  std::optional<std::string> proposed_action;  // compact JSON, shown to staff
  std::optional<NewAction> proposal;           // stored as a 'proposed' outbox row
};

[[nodiscard]] Result<std::int64_t> open_escalation(Database& db, const NewEscalation& e, Time now);

// The agent's escalation of a message it is processing, in one transaction: the
// escalation (with its proposal), the optional holding reply to the customer (an approved
// outbox row), and the message done with outcome 'escalated'. Returns the escalation id.
[[nodiscard]] Result<std::int64_t> escalate_message(Database& db, const NewEscalation& e,
                                                    const std::optional<NewAction>& holding_reply, Time now);

[[nodiscard]] Result<void> claim_escalation(Database& db, std::int64_t id, const std::string& who, Time now);

// `status` is resolved or dismissed; a pending proposal is rejected. `resolution` is
// to_sql(Resolution) for a resolved one, staff's note for a dismissed one.
[[nodiscard]] Result<void> close_escalation(Database& db, std::int64_t id, const std::string& who,
                                            EscalationStatus status, const std::string& resolution, Time now);

// Resolves the escalation by approving its proposal as it is; returns the action id.
[[nodiscard]] Result<std::int64_t> approve_escalation(Database& db, std::int64_t id, const std::string& who, Time now);

// Resolves the escalation with `action` (created by `who`, status approved), rejecting a
// pending proposal; `how` is its resolution (edited, replied). Returns the action id.
[[nodiscard]] Result<std::int64_t> resolve_with_action(Database& db, std::int64_t id, const std::string& who,
                                                       NewAction action, Resolution how, Time now);

}  // namespace dispatchd::store
