#pragma once
// Saved replies (docs/staff.md, "Saved replies"): texts kept in the store (store/saved_replies.h)
// that staff pick to fill a reply. Admins manage them (an admin account, the admin token,
// dispatchctl on the server); the caller decides who is an admin.
//
// A text may hold placeholders, filled from the case when the reply is used:
//   {customer}    the escalated message's sender (number or address)
//   {escalation}  the escalation's id
//   {staff}       the name of the staff member sending it
//   {channel}     the message's channel (whatsapp, gmail)
// and {{ and }} for a literal { and }. Any other {name}, and a brace left unmatched, is
// refused when the text is saved, never when it is sent. The filled text is then sent as
// staff::reply sends any staff reply: the same length cap, checks and audit.

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "staff/decisions.h"
#include "store/database.h"
#include "store/inbox.h"
#include "store/saved_replies.h"

namespace dispatchd::staff {

// What the placeholders stand for in one case.
struct CaseFields {
  std::string customer;
  std::string escalation;
  std::string staff;
  std::string channel;
};

// Why a text's placeholders cannot be filled: `placeholder` names an unknown one ("" for an
// unmatched brace).
struct TemplateError {
  std::string message;
  std::string placeholder;
};

// `text` with its placeholders filled and {{ }} made single braces. Pure.
[[nodiscard]] std::expected<std::string, TemplateError> fill(std::string_view text, const CaseFields& fields);

// Longest saved reply name, in bytes.
inline constexpr std::size_t k_max_saved_reply_name = 100;

// Adds a saved reply after checking its name (1 to 100 bytes of UTF-8, no control
// characters) and text (not empty, UTF-8, at most k_max_reply_code_points, known
// placeholders only); returns its id. `actor` is recorded in the audit trail.
[[nodiscard]] std::expected<std::int64_t, Refusal> add_saved_reply(store::Database& db, const std::string& name,
                                                                   const std::string& text, const std::string& actor,
                                                                   store::Time now);
// Replaces a saved reply's text, checked as add_saved_reply checks it.
[[nodiscard]] std::expected<void, Refusal> change_saved_reply(store::Database& db, std::int64_t id,
                                                              const std::string& text, const std::string& actor,
                                                              store::Time now);
[[nodiscard]] std::expected<void, Refusal> remove_saved_reply(store::Database& db, std::int64_t id,
                                                              const std::string& actor, store::Time now);

// The saved replies as the API and `dispatchctl replies list --json` print them: an array of
// {"id","name","text","created_by","created_at","updated_at"}.
std::string saved_replies_json(const std::vector<store::SavedReply>& replies);

// The fields of escalation `escalation` as `who` would send a reply to it.
[[nodiscard]] std::expected<CaseFields, Refusal> case_fields(store::Database& db, std::int64_t escalation,
                                                             const std::string& who);

// A saved reply filled for one case.
struct FilledReply {
  store::SavedReply reply;
  std::string filled;
};
// Every saved reply, filled for escalation `escalation` and `who`.
[[nodiscard]] std::expected<std::vector<FilledReply>, Refusal> filled_replies(store::Database& db,
                                                                              std::int64_t escalation,
                                                                              const std::string& who);

// Fills saved reply `saved` for the case and sends it with staff::reply; returns the
// outbox action id (refused, as it is, while the customer's reply window is closed).
[[nodiscard]] std::expected<std::int64_t, Refusal> reply_saved(store::Database& db, std::int64_t escalation,
                                                               const std::string& who, std::int64_t saved,
                                                               store::Time now, WindowRuleOf windows);

}  // namespace dispatchd::staff
