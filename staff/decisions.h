#pragma once
// Staff decisions on an escalation. An approved or edited action goes through the same
// validator and policy as the model's, against the escalated message (its sender is the
// only allowed recipient; its text is the grounding source), before anything reaches the
// outbox. Sending stays the daemon's job.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "catalog/catalog.h"
#include "common/reply_window.h"
#include "store/database.h"
#include "store/inbox.h"
#include "validator/validator.h"

namespace dispatchd::staff {

// What kind of refusal: the staff API answers each with its own status.
enum class RefusalKind {
  invalid,      // the decision itself: the validator refused the action, an empty reply or note
  not_found,    // no such escalation
  state,        // the escalation's state does not allow it (resolved, claimed by someone else)
  forbidden,    // this credential may not do it (a reassignment by someone who is not an admin)
  unavailable,  // the store could not do it now (busy, full disk): the same decision may work later
  internal,     // the database or the program is wrong
};

// Why a decision was refused; `verdict` is set when the validator refused the action.
struct Refusal {
  RefusalKind kind = RefusalKind::invalid;
  std::string message;
  std::optional<validator::Verdict> verdict;
};

// A store failure as a refusal: not_found, refused (state), retryable (unavailable), else
// internal.
Refusal to_refusal(store::Error error);

// Longest staff reply, in Unicode code points (WhatsApp's text limit).
inline constexpr std::size_t k_max_reply_code_points = 4096;

// Approve, edit and reply take `windows`, the channels' reply-window rules
// (connectors::window_rule; null: no channel has one). While the customer's window is closed
// a free-form reply is refused (an approved or edited one by the validator's window_closed
// policy, a staff reply with a message saying so); a template action still goes.

[[nodiscard]] std::expected<void, Refusal> claim(store::Database& db, std::int64_t escalation, const std::string& who,
                                                 store::Time now);

// Sends the escalation's proposal as it is; returns the outbox action id.
[[nodiscard]] std::expected<std::int64_t, Refusal> approve(store::Database& db, const catalog::Catalog& catalog,
                                                           std::int64_t escalation, const std::string& who,
                                                           store::Time now, WindowRuleOf windows);

// Sends `action_json` (a reply object in the catalog's format) instead of the proposal.
[[nodiscard]] std::expected<std::int64_t, Refusal> edit(store::Database& db, const catalog::Catalog& catalog,
                                                        std::int64_t escalation, const std::string& who,
                                                        const std::string& action_json, store::Time now,
                                                        WindowRuleOf windows);

// Sends `text` to the message's sender as a "staff_reply" action.
[[nodiscard]] std::expected<std::int64_t, Refusal> reply(store::Database& db, std::int64_t escalation,
                                                         const std::string& who, const std::string& text,
                                                         store::Time now, WindowRuleOf windows);

// Closes the escalation without sending anything; `note` says why.
[[nodiscard]] std::expected<void, Refusal> dismiss(store::Database& db, std::int64_t escalation, const std::string& who,
                                                   const std::string& note, store::Time now);

}  // namespace dispatchd::staff
