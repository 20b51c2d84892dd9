#pragma once
// Reads for staff and auditors (dispatchctl, the staff API), through the documented views
// v_messages, v_attempts, v_actions, v_escalations and v_audit only, so that what staff
// see is what an auditor's SQL sees.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/desk.h"
#include "store/error.h"
#include "store/media.h"
#include "store/states.h"

namespace dispatchd::store {

struct MessageRow {
  std::int64_t id = 0;
  std::string channel;
  std::string provider_message_id;
  std::string conversation_id;
  std::string sender;
  std::string received_at;
  std::string text;
  InboxState state = InboxState::received;
  Outcome outcome = Outcome::pending;
};

struct AttemptRow {
  std::int64_t attempt = 0;
  std::string provider;
  std::string model;
  std::optional<std::string> raw_output;
  Verdict verdict = Verdict::invalid;
  std::string errors;  // JSON array
  std::optional<std::string> error_class;
  std::optional<std::int64_t> latency_ms;
  std::optional<std::int64_t> input_tokens;
  std::optional<std::int64_t> output_tokens;
  std::optional<std::string> finish_reason;
  std::string created_at;
  // Migration 0010 (none on older rows): the other billed tokens and the cost in USD, none
  // when unknown.
  std::optional<std::int64_t> cached_input_tokens;
  std::optional<std::int64_t> cache_write_tokens;
  std::optional<std::int64_t> reasoning_tokens;
  std::optional<double> cost_usd;
  // Migration 0037: the customers' files the request carried, and their bytes (0 when none).
  std::int64_t media_count = 0;
  std::int64_t media_bytes = 0;
};

struct ActionRow {
  std::int64_t id = 0;
  std::int64_t message_id = 0;
  std::string action;
  std::string arguments;  // JSON object
  std::optional<std::string> recipient;
  std::optional<std::string> body;
  ActionStatus status = ActionStatus::proposed;
  std::string created_by;
  std::optional<std::string> provider_message_id;
  std::optional<std::string> error;
  std::string updated_at;
};

struct EscalationRow {
  std::int64_t id = 0;
  std::int64_t message_id = 0;
  EscalationReason reason = EscalationReason::contract_failed;
  std::optional<std::string> detail;  // JSON
  EscalationStatus status = EscalationStatus::open;
  std::optional<std::string> proposed_action;  // JSON
  std::optional<std::string> assignee;
  std::optional<std::string> resolution;
  std::string created_at;
  std::optional<std::string> claimed_at;
  std::optional<std::string> resolved_at;
  // From the message, for listings.
  std::string channel;
  std::string sender;
  std::string text;
  // Migration 0028: when dispatchd recorded that the case, still open, passed its
  // response-time target (staff/targets.h); none when it has not (or before 0028).
  std::optional<std::string> breach_noticed_at;
};

// Which escalations a listing shows; an unset member does not filter. A page: the `limit`
// oldest after escalation `after` (keyset paging: pages stay put while new ones open).
struct EscalationFilter {
  std::optional<EscalationStatus> status;
  std::optional<EscalationReason> reason;
  std::optional<std::string> channel;
  std::optional<std::int64_t> after;  // an escalation id: the rows opened after it
  std::optional<std::int64_t> limit;  // at most this many rows
};

// Escalations, oldest first (by created_at, then id). Indexed by status and by age, so a
// page costs the same at a million escalations as at ten.
[[nodiscard]] Result<std::vector<EscalationRow>> list_escalations(Database& db, const EscalationFilter& filter = {});

struct EscalationCase {
  EscalationRow escalation;
  MessageRow message;
  std::vector<MessageRow> conversation;  // every message of the conversation up to this one
  std::vector<AttemptRow> attempts;      // of this message, in order
  std::vector<ActionRow> actions;        // of this message: the proposal and staff actions
  std::vector<ActionRow> sent;           // to the customer in the conversation so far, any message
  std::vector<NoteRow> notes;            // staff's internal notes on it, oldest first (store/desk.h)
  std::vector<HandOverRow> hand_overs;   // its releases, take-overs and reassignments, oldest first
  ClaimState claim;                      // its claim as the hand-over rule reads it
  std::vector<MediaRow> media;           // the message's files (store/media.h), in order
};

// Everything staff need to decide one escalation.
[[nodiscard]] Result<EscalationCase> show_escalation(Database& db, std::int64_t id);

// A change to an escalation, read from the audit trail (so changes made by dispatchctl
// count too): its creation, a claim, a resolution or a dismissal, a hand-over (release,
// take-over, reassignment) or a note, with the escalation's state now.
struct EscalationEvent {
  std::int64_t audit_id = 0;
  bool created = false;  // else an update
  std::int64_t escalation_id = 0;
  EscalationStatus status = EscalationStatus::open;
  std::optional<std::string> assignee;
  EscalationReason reason = EscalationReason::contract_failed;
  std::optional<AuditKind> change;  // the audit event: escalation, staff_claim, staff_takeover, staff_note, ...
};

// At most `limit` escalation events in audit rows (after, up_to], in order.
[[nodiscard]] Result<std::vector<EscalationEvent>> escalation_events(Database& db, std::int64_t after,
                                                                     std::int64_t up_to, int limit);

// The newest audit row's id (0 when the trail is empty).
[[nodiscard]] Result<std::int64_t> last_audit_id(Database& db);

struct AuditRow {
  std::int64_t id = 0;
  std::string at;
  std::string event;              // as stored, what auditors read and the chain commits to
  std::optional<AuditKind> kind;  // nullopt: a kind this dispatchd does not know (a newer one's)
  std::optional<std::int64_t> message_id;
  std::string actor;
  std::string detail;  // JSON
  std::string prev_hash;
  std::string hash;
};

// Audit events in order, filtered by message and by `since` (an ISO 8601 UTC prefix
// compared as text, e.g. "2026-11-30" or "2026-11-30T12:00:00Z").
[[nodiscard]] Result<std::vector<AuditRow>> list_audit(Database& db, std::optional<std::int64_t> message_id,
                                                       const std::optional<std::string>& since);

}  // namespace dispatchd::store
