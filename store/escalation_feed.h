#pragma once
// The feed of new escalations for the escalation notifier (daemon/escalation_notifier.h).
//
// The feed is the audit trail itself: every escalation appends an audit event
// `escalation` (detail {"escalation": id, ...}) in the transaction that opens it
// (store/queue.h), so "new escalations" are the `escalation` events after a cursor, in
// audit order, and nothing is written twice. The cursor (migrations/0007, one row) is the
// audit id of the last event the notifier finished with (delivered, or refused for good).
//
// First start: init_notify_cursor() on a database without a cursor sets it to the newest
// audit id, so a notify_url configured on a busy database announces only what happens
// from then on. The cursor then stays, whatever the configuration: a daemon run without a
// notify_url leaves it behind, and the next run with one sends what happened meanwhile.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/states.h"

namespace dispatchd::store {

struct NotifyCursor {
  std::int64_t last_audit_id = 0;
  Time started_at{};  // the first start with a notify_url
};

[[nodiscard]] Result<std::optional<NotifyCursor>> read_notify_cursor(Database& db);

// The cursor; when there is none yet, creates it at the newest audit id (0 for an empty
// trail) with started_at = now.
[[nodiscard]] Result<NotifyCursor> init_notify_cursor(Database& db, Time now);

// Moves the cursor forward to `audit_id`; never backwards (a lower id changes nothing).
// REQUIRES: the cursor exists (init_notify_cursor); not_found otherwise.
[[nodiscard]] Result<void> advance_notify_cursor(Database& db, std::int64_t audit_id, Time now);

// What a notification announces: a new escalation (audit event `escalation`) or an open
// one past its response-time target (audit event `escalation_breached`, from notice_breach).
enum class NotifyKind { opened, breached };

struct PendingEscalation {
  NotifyKind kind = NotifyKind::opened;
  std::int64_t audit_id = 0;
  std::int64_t escalation_id = 0;
  EscalationReason reason = EscalationReason::contract_failed;
  std::string channel;     // "whatsapp", "gmail"
  std::string sender;      // as stored (untrusted)
  std::string text;        // the message's text, leading whitespace trimmed, at most 1000 characters (untrusted)
  std::string created_at;  // the escalation's, ISO 8601 UTC
};

// The escalations whose audit event (`escalation` or `escalation_breached`) comes after `after_audit_id`, oldest first,
// at most `limit`. An unreadable reason is `corrupt`.
[[nodiscard]] Result<std::vector<PendingEscalation>> pending_escalations(Database& db, std::int64_t after_audit_id,
                                                                         int limit);

// How many such events come after `after_audit_id`.
[[nodiscard]] Result<std::int64_t> count_pending_escalations(Database& db, std::int64_t after_audit_id);

// Response-time targets (staff/targets.h). An open escalation's clock: what the target needs.
struct OpenClock {
  std::int64_t escalation_id = 0;
  EscalationReason reason = EscalationReason::contract_failed;
  Time created_at{};
  bool breach_noticed = false;  // notice_breach recorded it already
};

// Every open (unclaimed) escalation, oldest first, through the (status, created_at) index.
// An unreadable reason or time is `corrupt`.
[[nodiscard]] Result<std::vector<OpenClock>> open_clocks(Database& db);

// Records that open escalation `id` passed its due time `due_at`, once: sets its
// breach_noticed_at (migration 0028) and appends the audit event `escalation_breached`
// ({"escalation": id, "reason": ..., "due_at": ...}, actor dispatchd) in one transaction,
// which the notifier's feed then announces. True when this call recorded it; false when it
// was recorded before (by this instance or another: the UPDATE is conditional, so two
// instances never both record it) or the case is no longer open.
[[nodiscard]] Result<bool> notice_breach(Database& db, std::int64_t id, Time due_at, Time now);

}  // namespace dispatchd::store
