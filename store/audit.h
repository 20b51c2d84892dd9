#pragma once
// The hash-chained audit trail. Each event stores sha256(prev_hash || canonical event), so
// an edited or deleted row breaks the chain at the first row after the change.
// Known limit: removing the newest rows leaves a shorter chain that still verifies; the
// count of events is reported so that it can be compared with an earlier run.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "store/database.h"
#include "store/error.h"

namespace dispatchd::store {

struct AuditEvent {
  std::string at;     // ISO 8601 UTC
  std::string event;  // received, attempt, verdict, action, escalation, ...
  std::optional<std::int64_t> message_id;
  std::string actor;   // "dispatchd" or the staff member
  std::string detail;  // compact JSON
};

// Appends `event` after the newest row. REQUIRES: called inside the transaction of the
// change it describes, so both commit or neither does. Returns the new row's hash.
Result<std::string> append_audit(Database& db, const AuditEvent& event);

// Appends one event in a transaction of its own (events that describe no other change,
// e.g. a configuration reload).
Result<void> record_event(Database& db, const AuditEvent& event);

struct AuditCheck {
  std::int64_t events = 0;                   // rows checked
  std::optional<std::int64_t> first_broken;  // audit id of the first bad row
  std::string reason;                        // why that row is bad
};

// Recomputes the whole chain in id order.
Result<AuditCheck> verify_audit(Database& db);

// Recomputes the rows with ids in [from, to] (a segment, e.g. around one message's events):
// each row's hash, and each row's link to the row before it; the first row links to the
// newest row before `from`, or to the genesis hash when there is none. `events` counts the
// rows checked.
Result<AuditCheck> verify_audit_range(Database& db, std::int64_t from, std::int64_t to);

// The hash before the first event.
inline constexpr const char* k_audit_genesis = "0000000000000000000000000000000000000000000000000000000000000000";

}  // namespace dispatchd::store
