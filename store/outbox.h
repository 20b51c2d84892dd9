#pragma once
// The outbox: actions that send a message, and their delivery states.
//
//   proposed --staff approve--> approved --begin_send--> sending --> sent
//       |                          ^                        |-----> failed   (+ escalation send_failed)
//       +--staff edit/reply/       +------retry_send--------+-----> unknown  (+ escalation delivery_unknown)
//          dismiss--> rejected
//
// No duplicate sends after any crash: begin_send commits 'sending' before the caller talks
// to the provider, and a row found in 'sending' at start-up (recover_sending) becomes
// 'unknown', never 'approved' again. Only retry_send, for a call that certainly did not
// reach the provider (e.g. connection refused), puts a row back in line, ahead of the rows
// queued after it: sends to one counterpart leave one at a time, in order (begin_send).
// Every transition appends an 'action' audit event in the same transaction. A message left
// 'decided' (its action was the pending step) becomes done with the send's outcome:
// 'replied' when sent, 'escalated' when failed or unknown.
//
// A row may call an MCP tool instead of sending a message (tool_server set: a catalog mcp
// action with "use": "act"). It takes the same states, in a lane of its own (k_tool_lane)
// whatever its message's channel: its `body` is the tool's arguments object; 'sent' means
// the tool answered without an error, and then its follow_up, when it has one, is queued
// to `recipient` as a reply of its own (the message stays decided until that is sent);
// 'failed' opens a tool_failed escalation instead of send_failed.

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/send_pricing.h"

namespace dispatchd::store {

struct NewAction {
  std::int64_t message_id = 0;
  std::string action;                            // the catalog action's name, or "staff_reply"
  std::string arguments;                         // compact JSON object (the validated reply)
  std::optional<std::string> recipient;          // who the message goes to
  std::optional<std::string> body;               // the message text
  ActionStatus status = ActionStatus::approved;  // approved (send it) or proposed (staff decide)
  std::string created_by = "dispatchd";          // or the staff member
  std::optional<std::int64_t> escalation_id;
  // The recipient as the reply wrote it, when that differs from `recipient` (the policy
  // accepts "+1 555-123-4567" for 15551234567): recorded in the audit event only.
  std::optional<std::string> recipient_written;
  // A tool call instead of a message: the server and tool; `body` holds the arguments.
  std::optional<std::string> tool_server;
  std::optional<std::string> tool_name;
  std::optional<std::string> follow_up;  // the reply to `recipient` once the tool succeeded
  // Choices sent with `body` (common/interactive.h's stored form; migration 0031): the
  // channel sends them its way (WhatsApp's buttons or list, Gmail's numbered lines).
  std::optional<std::string> interactive;
  // A template sent instead of `body` (common/template_send.h's stored form; migration
  // 0032); `body` then holds its one-line summary.
  std::optional<std::string> template_message;
};

// `action` made a tool call: `call`'s server, tool and arguments (as the body), and its
// follow-up reply to `recipient` when it has one (none: no recipient either).
inline NewAction with_tool(NewAction action, std::string server, std::string tool, std::string arguments,
                           std::optional<std::string> follow_up) {
  action.tool_server = std::move(server);
  action.tool_name = std::move(tool);
  action.body = std::move(arguments);
  action.follow_up = std::move(follow_up);
  if (!action.follow_up) {
    action.recipient.reset();
    action.recipient_written.reset();
  }
  return action;
}

// The lane of the rows that call a tool (store::NewAction::tool_server set): begin_send,
// recover_sending and sending_items take it as a channel name.
inline constexpr std::string_view k_tool_lane = "tools";

// Adds an action with a fresh idempotency key ("dispatchd-<message>-<n>"). Its audit event
// is {action, name, to, recipient, recipient_written, arguments}, the recipients when set.
[[nodiscard]] Result<std::int64_t> add_action(Database& db, const NewAction& action, Time now);

// The agent's auto-approved reply: the action (approved) and the message decided, in one
// transaction. Returns the action id.
[[nodiscard]] Result<std::int64_t> queue_reply(Database& db, NewAction action, Time now);

struct OutboxItem {
  std::int64_t id = 0;
  std::int64_t message_id = 0;
  std::string channel;
  std::string conversation_id;
  std::string recipient;
  std::string body;
  std::string idempotency_key;
  std::string action;       // the catalog action's name
  std::string tool_server;  // a tool call's ("" for a message)
  std::string tool_name;
  std::string interactive;       // NewAction::interactive ("" for none)
  std::string template_message;  // NewAction::template_message ("" for none)
};

// Takes the oldest approved action (of `channel`'s messages, or of k_tool_lane, when given)
// that may leave now and commits it as 'sending'; nullopt when none waits.
// Sends to one counterpart leave in order: a message is passed over while one queued before
// it to the same recipient on the same channel is still 'approved' (a retry included) or
// 'sending'; an outcome ('sent', 'failed', and also 'unknown') lets the next one go. Rows
// are queued in id order, except a proposal, which is queued when staff approve it, behind
// every row there is then. Tool calls neither wait nor hold a message back. A row passed
// over is taken by a later call, once the one before it has its outcome. `instance`
// (instance.id, store/instances.h) is recorded as the claimer, so that a takeover of that
// instance finds its sends in flight; several instances calling this at once on PostgreSQL
// each claim a different action.
[[nodiscard]] Result<std::optional<OutboxItem>> begin_send(Database& db, Time now, const std::string& channel = "",
                                                           const std::string& instance = "");

// sending -> sent, with the provider's id for the message ("" for a tool call). A tool call's
// follow_up is queued (approved) in the same transaction.
[[nodiscard]] Result<void> complete_send(Database& db, std::int64_t id, const std::string& provider_message_id,
                                         Time now);

// sending -> approved: the call certainly did not reach the provider; it will be sent again.
[[nodiscard]] Result<void> retry_send(Database& db, std::int64_t id, const std::string& error, Time now);

// Why a send failed for good: the provider (or the channel before calling it) refused it,
// or the counterpart's reply window had closed (only a template reaches them now).
enum class SendFailure { refused, window_closed };

// sending -> failed; opens an escalation in the same transaction and returns its id:
// send_failed (refused), window_closed (with the action's arguments as the proposed action,
// the reply staff may send as a template), or tool_failed for a tool call either way.
[[nodiscard]] Result<std::int64_t> fail_send(Database& db, std::int64_t id, const std::string& error, Time now,
                                             SendFailure failure = SendFailure::refused);

// sending -> unknown (a timeout or crash after the request left); opens a delivery_unknown
// escalation in the same transaction and returns its id. Never sent again automatically.
[[nodiscard]] Result<std::int64_t> unknown_send(Database& db, std::int64_t id, const std::string& error, Time now);

// A delivery report from the provider about one of our messages (e.g. a WhatsApp status
// webhook), matched by the provider's message id or by our idempotency key (the tracker
// sent with the message). sent, delivered or read confirm it: an action in 'sending' or
// 'unknown' becomes 'sent'. failed fails it ('sent', 'sending' or 'unknown' -> 'failed') with
// a send_failed escalation. Every report appends a 'delivery' audit event with the status's
// text (`other_text` for another status).
struct DeliveryReport {
  std::string provider_message_id;
  std::string tracker;  // our idempotency key, when the provider echoes it ("" otherwise)
  DeliveryStatus status = DeliveryStatus::other;
  std::string error;  // for failed: what the provider said
  // What the provider bills for the message (store/send_pricing.h), when the report says:
  // kept in send_pricing for the action (a later report replaces it) and in the audit event.
  std::optional<SendPricing> pricing;
  std::string pricing_category_text;  // the category as the provider spelled it, for the audit event
  std::string other_text;             // DeliveryStatus::other: the status as the provider spelled it
};

struct DeliveryResult {
  std::optional<std::int64_t> action_id;      // none: not one of ours (or not known yet)
  std::optional<std::int64_t> escalation_id;  // opened for a failure
};

[[nodiscard]] Result<DeliveryResult> apply_delivery(Database& db, const DeliveryReport& report, Time now);

// At start-up: every action a previous run left in 'sending' becomes unknown (with its
// escalation), except those of `lookup_channels`: channels that can look up whether a send
// arrived (Gmail searches for our Message-ID) resolve theirs (sending_items, then
// Channel::resolve_unknown). Returns the ids made unknown.
[[nodiscard]] Result<std::vector<std::int64_t>> recover_sending(Database& db, Time now,
                                                                std::span<const std::string> lookup_channels = {});

// The actions of `channel`'s messages in 'sending', oldest first: at start-up, what a
// previous run left there for recover_sending's lookup channels. With `claimed_by` (several
// instances on PostgreSQL) only the sends that instance claimed: the others' sends in
// 'sending' are in flight, not left over (store/instances.h).
[[nodiscard]] Result<std::vector<OutboxItem>> sending_items(Database& db, const std::string& channel,
                                                            const std::string& claimed_by = "");

}  // namespace dispatchd::store
