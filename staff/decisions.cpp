#include "staff/decisions.h"

#include <algorithm>

#include "common/json_out.h"
#include "common/utf8.h"
#include "staff/case_window.h"
#include "store/queue.h"
#include "store/views.h"
#include "validator/outbound.h"

namespace dispatchd::staff {
namespace {

std::unexpected<Refusal> refuse(std::string message) {
  return std::unexpected(Refusal{RefusalKind::invalid, std::move(message), {}});
}

std::unexpected<Refusal> refuse(store::Error error) { return std::unexpected(to_refusal(std::move(error))); }

// The customer's reply window now, as the agent would see it: nullopt without one.
std::expected<std::optional<ReplyWindow>, Refusal> window_now(store::Database& db, WindowRuleOf windows,
                                                              const store::MessageRow& message, store::Time now) {
  auto window = reply_window_of(db, windows ? windows(message.channel) : nullptr, message.channel, message.sender, now);
  if (!window) return refuse(std::move(window.error()));
  return *window;
}

// Validates `reply` as if the model had written it for the escalated message now (its
// window included), and turns it into an outbox row.
std::expected<store::NewAction, Refusal> checked_action(store::Database& db, const catalog::Catalog& catalog,
                                                        std::int64_t escalation, const std::string& reply,
                                                        WindowRuleOf windows, store::Time now) {
  auto item = store::show_escalation(db, escalation);
  if (!item) return refuse(item.error());
  const auto& message = item->message;
  auto window = window_now(db, windows, message, now);
  if (!window) return std::unexpected(std::move(window.error()));
  validator::Verdict verdict = validator::validate(catalog, reply, {message.sender, message.text, *window});
  if (!verdict.ok) {
    std::string text = "the action does not meet the catalog's contract:";
    for (const auto& error : verdict.errors) text += "\n  " + error.path + ": " + error.message;
    return std::unexpected(Refusal{RefusalKind::invalid, std::move(text), std::move(verdict)});
  }
  const auto outbound = validator::outbound_of(catalog, verdict, message.sender);
  if (auto call = outbound ? std::nullopt : validator::tool_call_of(catalog, verdict, message.sender)) {
    // An mcp act: the tool call, made by the outbox once approved, and its reply after.
    std::optional<std::string> follow_up;
    store::NewAction action{.message_id = message.id, .action = verdict.action, .arguments = verdict.output};
    if (call->follow_up) {
      follow_up = std::move(call->follow_up->body);
      action.recipient = std::move(call->follow_up->recipient);
      action.recipient_written = std::move(call->follow_up->recipient_written);
    }
    return store::with_tool(std::move(action), std::move(call->server), std::move(call->tool),
                            std::move(call->arguments), std::move(follow_up));
  }
  if (!outbound) {
    return std::unexpected(Refusal{RefusalKind::invalid,
                                   "only a reply action or a tool call can be sent (\"" + verdict.action +
                                       "\" is neither); use queue reply or queue dismiss",
                                   std::move(verdict)});
  }
  return store::NewAction{.message_id = message.id,
                          .action = verdict.action,
                          .arguments = verdict.output,
                          .recipient = outbound->recipient,
                          .body = outbound->body,
                          .recipient_written = outbound->recipient_written,
                          .interactive = outbound->interactive,
                          .template_message = outbound->template_message};
}

template <typename T>
std::expected<T, Refusal> lift(store::Result<T> result) {
  if (!result) return refuse(std::move(result.error()));
  if constexpr (std::is_void_v<T>) {
    return {};
  } else {
    return std::move(*result);
  }
}

}  // namespace

Refusal to_refusal(store::Error error) {
  const auto kind = [&] {
    if (error.retryable()) return RefusalKind::unavailable;
    switch (error.kind) {
      case store::ErrorKind::not_found: return RefusalKind::not_found;
      case store::ErrorKind::refused: return RefusalKind::state;
      default: return RefusalKind::internal;
    }
  }();
  return Refusal{kind, std::move(error.message), {}};
}

std::expected<void, Refusal> claim(store::Database& db, std::int64_t escalation, const std::string& who,
                                   store::Time now) {
  return lift(store::claim_escalation(db, escalation, who, now));
}

std::expected<std::int64_t, Refusal> approve(store::Database& db, const catalog::Catalog& catalog,
                                             std::int64_t escalation, const std::string& who, store::Time now,
                                             WindowRuleOf windows) {
  auto item = store::show_escalation(db, escalation);
  if (!item) return refuse(item.error());
  if (!item->escalation.proposed_action) {
    return refuse(
        store::Error::refused("escalation " + std::to_string(escalation) + " has no proposed action to approve"));
  }
  // The catalog may have changed since the proposal was made: check it again.
  auto checked = checked_action(db, catalog, escalation, *item->escalation.proposed_action, windows, now);
  if (!checked) return std::unexpected(std::move(checked.error()));
  // A proposal stored before recipients were made canonical may be addressed as the model
  // wrote it ("+1 555-123-4567"), which the channel cannot match to the customer: the checked
  // action, addressed to the counterpart as stored, is approved in its place.
  const auto proposal = std::ranges::find(item->actions, store::ActionStatus::proposed, &store::ActionRow::status);
  if (proposal != item->actions.end() && proposal->recipient != checked->recipient) {
    return lift(store::resolve_with_action(db, escalation, who, std::move(*checked), store::Resolution::approved, now));
  }
  return lift(store::approve_escalation(db, escalation, who, now));
}

std::expected<std::int64_t, Refusal> edit(store::Database& db, const catalog::Catalog& catalog, std::int64_t escalation,
                                          const std::string& who, const std::string& action_json, store::Time now,
                                          WindowRuleOf windows) {
  auto checked = checked_action(db, catalog, escalation, action_json, windows, now);
  if (!checked) return std::unexpected(std::move(checked.error()));
  return lift(store::resolve_with_action(db, escalation, who, std::move(*checked), store::Resolution::edited, now));
}

std::expected<std::int64_t, Refusal> reply(store::Database& db, std::int64_t escalation, const std::string& who,
                                           const std::string& text, store::Time now, WindowRuleOf windows) {
  if (!utf8::is_valid(text)) return refuse("the reply is not valid UTF-8");
  const std::size_t length = utf8::code_points(text);
  if (length == 0) return refuse("the reply is empty");
  if (length > k_max_reply_code_points) {
    return refuse("the reply has " + std::to_string(length) + " characters; at most " +
                  std::to_string(k_max_reply_code_points) + " can be sent");
  }
  auto item = store::show_escalation(db, escalation);
  if (!item) return refuse(item.error());
  auto window = window_now(db, windows, item->message, now);
  if (!window) return std::unexpected(std::move(window.error()));
  if (*window && !(*window)->open) {
    const auto closed = (*window)->closes_at ? " (it closed at " + store::format_time(*(*window)->closes_at) + ")" : "";
    return refuse("the customer's reply window is closed" + closed +
                  ": free-form text cannot reach them now; send a template action instead (edit)");
  }
  store::NewAction action{.message_id = item->message.id,
                          .action = "staff_reply",
                          .arguments = JsonOut().begin_object().field("text", text).end_object().str(),
                          .recipient = item->message.sender,
                          .body = text};
  return lift(store::resolve_with_action(db, escalation, who, std::move(action), store::Resolution::replied, now));
}

std::expected<void, Refusal> dismiss(store::Database& db, std::int64_t escalation, const std::string& who,
                                     const std::string& note, store::Time now) {
  if (note.empty()) return refuse("a dismissal needs a note saying why");
  return lift(store::close_escalation(db, escalation, who, store::EscalationStatus::dismissed, note, now));
}

}  // namespace dispatchd::staff
