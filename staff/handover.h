#pragma once
// Hand-overs of a claimed escalation and staff's internal notes (docs/staff.md, "Hand-overs"
// and "Notes").
//
// The rule is hand_over_rule(): pure (no store, no clock), tested as a table. Given the claim
// as it stands, who asks for what and when, it answers the rule that allows it or a typed
// refusal:
//   release    the holder only: claimed -> open, no assignee
//   takeover   anyone but the holder, once the claim is idle for `idle_limit` (now -
//              claimed_at >= idle_limit), or at once when the holder's account is revoked
//   reassign   an admin only (the admin token, or dispatchctl), to an active account other
//              than the holder
// An open item has no claim to hand over (not_claimed); a resolved or dismissed one is closed.
//
// release/takeover/reassign run the rule and the store's change in one transaction
// (store/desk.h), so the audit event and the change commit together or not at all.

#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "staff/decisions.h"
#include "store/database.h"
#include "store/desk.h"
#include "store/inbox.h"

namespace dispatchd::staff {

enum class HandOverRefusalKind {
  closed,             // resolved or dismissed
  not_claimed,        // open: nobody holds it
  not_holder,         // a release by someone who does not hold it
  already_holder,     // a take-over by the holder, a reassignment to the holder
  not_idle,           // a take-over before the claim is idle long enough (minutes_left says how long)
  not_admin,          // a reassignment by someone who is not an admin
  target_not_active,  // a reassignment to a name that is not an active account
};

struct HandOverRefusal {
  HandOverRefusalKind kind = HandOverRefusalKind::closed;
  std::optional<std::string> holder;  // who holds the claim, when someone does
  std::int64_t minutes_left = 0;      // not_idle: whole minutes until a take-over is allowed (at least 1)
};

// What is asked for.
struct HandOverAsk {
  store::HandOverKind kind = store::HandOverKind::release;
  std::string actor;
  bool actor_is_admin = false;
  std::optional<std::string> to;  // reassign: the new holder
  bool to_active = false;         // reassign: `to` is an active account
};

[[nodiscard]] std::expected<store::HandOverRule, HandOverRefusal> hand_over_rule(const store::ClaimState& claim,
                                                                                 const HandOverAsk& ask,
                                                                                 store::Time now,
                                                                                 std::chrono::minutes idle_limit);

// The refusal as one line naming the escalation ("escalation 2 is claimed by luis, idle for
// less than 30 minutes: a take-over is allowed in 12 minutes").
std::string describe(const HandOverRefusal& refusal, std::int64_t escalation);

// The API's answer to a refusal: not_admin is forbidden (403), target_not_active not_found
// (404), the others state (409).
RefusalKind refusal_kind(HandOverRefusalKind kind);

// Default staff.claim_idle_minutes.
inline constexpr std::chrono::minutes k_default_claim_idle{30};
// Longest note (a hand-over's or an internal one), in Unicode code points.
inline constexpr std::size_t k_max_note_code_points = 4096;

// A hand-over as its rule allows it; the store call in the same transaction. `note` is
// optional ("" for none), valid UTF-8 of at most k_max_note_code_points.
[[nodiscard]] std::expected<store::HandOverRule, Refusal> hand_over(store::Database& db, std::int64_t escalation,
                                                                    const HandOverAsk& ask, const std::string& note,
                                                                    store::Time now, std::chrono::minutes idle_limit);

// An internal note by `author`: never sent to the customer. Not empty, valid UTF-8, at most
// k_max_note_code_points; allowed on closed escalations too. Returns the note's id.
[[nodiscard]] std::expected<std::int64_t, Refusal> add_note(store::Database& db, std::int64_t escalation,
                                                            const std::string& author, const std::string& text,
                                                            store::Time now);

}  // namespace dispatchd::staff
