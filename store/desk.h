#pragma once
// The staff desk around a claim (docs/staff.md, "Hand-overs" and "Notes"): what the hand-over
// rule reads, the hand-over itself, and staff's internal notes on an escalation.
//
// Whether a hand-over is allowed is staff/'s pure rule (staff/handover.h); the store reads
// what that rule needs (claim_state) and writes the outcome (record_hand_over), both inside
// one transaction the caller opens. A hand-over changes the escalation only if the claim is
// still the one the rule saw (same status, same holder): a claim changed in between is
// refused, never overwritten.
//
// The idle clock is escalations.claimed_at: set when a person gets the claim (a claim, a
// take-over, a reassignment) and moved forward by the holder's own activity on the case
// (claiming it again, writing a note).
//
// A note is never sent: it is a row of escalation_notes (migration 0026) and an audit event
// staff_note in the same transaction, and never an outbox row.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/states.h"

namespace dispatchd::store {

// What is done with a claim: the holder gives it back (release: claimed -> open, no
// assignee), another person takes it (takeover), an admin gives it to someone (reassign).
enum class HandOverKind { release, takeover, reassign };
// Which rule allowed it, recorded in the audit event: the holder's own release, the claim
// idle past staff.claim_idle_minutes, the holder's account revoked, an admin's reassignment.
enum class HandOverRule { holder, idle, holder_revoked, admin };

// "release", "takeover", "reassign"; the audit events are staff_release, staff_takeover and
// staff_reassign.
std::string_view to_text(HandOverKind kind);
// The kind named by to_text's word (the API's path, dispatchctl's verb); nullopt for another.
std::optional<HandOverKind> hand_over_kind(std::string_view word);
// "holder", "idle", "holder_revoked", "admin"; recorded in the audit event's detail.
std::string_view to_text(HandOverRule rule);
// The rule named by to_text's word; nullopt for another.
std::optional<HandOverRule> hand_over_rule(std::string_view word);

// An escalation's claim as the hand-over rule reads it.
struct ClaimState {
  std::int64_t message_id = 0;
  EscalationStatus status = EscalationStatus::open;
  std::optional<std::string> holder;  // the assignee of a claimed item
  std::optional<Time> active_at;      // claimed_at: the holder's last activity
  bool holder_revoked = false;        // the holder names a revoked account (a name with no account is not revoked)
};

// not_found when there is no such escalation.
[[nodiscard]] Result<ClaimState> claim_state(Database& db, std::int64_t id);

struct HandOver {
  HandOverKind kind = HandOverKind::release;
  HandOverRule rule = HandOverRule::holder;
  std::string actor;              // who did it
  std::string from;               // the holder the rule saw
  std::optional<std::string> to;  // the new holder; none for a release
  std::string note;               // why, as the actor wrote it ("" when none)
};

// Moves the claim from `h.from` to `h.to` (or back to open) with claimed_at = now, and
// appends the audit event staff_release | staff_takeover | staff_reassign with the
// escalation, from, to, rule and note. REQUIRES: the caller's transaction, after the rule
// allowed it on claim_state. Refused when the claim is no longer h.from's.
[[nodiscard]] Result<void> record_hand_over(Database& db, std::int64_t id, const HandOver& h, Time now);

// Every hand-over of an escalation, oldest first, read from the audit trail.
struct HandOverRow {
  std::int64_t audit_id = 0;
  std::string at;
  HandOverKind kind = HandOverKind::release;
  std::string actor;
  std::optional<std::string> from;
  std::optional<std::string> to;
  HandOverRule rule = HandOverRule::holder;
  std::string note;
};
[[nodiscard]] Result<std::vector<HandOverRow>> list_hand_overs(Database& db, std::int64_t escalation_id);

struct NoteRow {
  std::int64_t id = 0;
  std::int64_t escalation_id = 0;
  std::string author;
  std::string text;
  std::string created_at;
};

// Adds `text` (already checked by the caller: not empty, bounded) by `author` to the
// escalation, with its staff_note audit event; when `author` holds the claim, its idle clock
// moves to `now`. Notes are allowed in every state, closed ones included. Returns the note's id.
[[nodiscard]] Result<std::int64_t> add_note(Database& db, std::int64_t escalation_id, const std::string& author,
                                            const std::string& text, Time now);

// The escalation's notes, oldest first (v_notes).
[[nodiscard]] Result<std::vector<NoteRow>> list_notes(Database& db, std::int64_t escalation_id);

}  // namespace dispatchd::store
