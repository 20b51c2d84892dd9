#pragma once
// One message's trail (`dispatchctl trail`, GET /api/messages/{id}/trail): everything the
// store holds about one inbound message, read in one go. A read model only: it changes
// nothing, and it is read inside one read transaction, so the parts agree with each other
// while dispatchd keeps writing.
//
// What the store does not keep, and so no trail can show: the exact prompt sent to the
// model (each attempt keeps the provider's request summary: turns and sizes), the answers
// of read-only tools (kept in memory for the message's run only) and the validator's
// repairs (they follow from the raw output: staff/trail_render.h recomputes them). The
// history is the conversation before the message as the agent reads it (store::history),
// read now: replies sent since the decision are not in it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/audit.h"
#include "store/database.h"
#include "store/desk.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/media.h"
#include "store/send_pricing.h"
#include "store/views.h"

namespace dispatchd::store {

struct TrailAttempt {
  AttemptRow row;
  std::optional<std::string> request_summary;  // what the provider call carried; never the prompt itself
};

// A delivery report for an action (the `delivery` audit event): WhatsApp's sent, delivered,
// read, failed statuses as the channel reported them.
struct TrailDelivery {
  std::int64_t audit_id = 0;
  std::string at;
  DeliveryStatus status = DeliveryStatus::other;
  std::string reported;  // the provider's word for it, as recorded (other's own text)
  std::optional<std::string> provider_message_id;
  std::optional<std::string> error;
};

struct TrailAction {
  ActionRow row;
  std::optional<std::int64_t> escalation_id;  // the escalation it was proposed for or resolved
  std::string created_at;
  std::vector<TrailDelivery> deliveries;  // in order
  std::optional<SendPricing> pricing;     // what the channel billed for it, when reported (send_pricing.h)
};

// Whether the audit chain verifies across the message's events: the segment of the chain
// from its first event to its last (other messages' events in between included).
struct TrailChain {
  std::int64_t from = 0;  // audit ids
  std::int64_t to = 0;
  AuditCheck check;
};

struct Trail {
  MessageRow message;
  std::optional<std::string> message_type;
  // v_messages.cost_usd: the sum of the attempts' costs in USD; none when any is unknown.
  std::optional<double> cost_usd;
  // The messages one decision answers, in order (store/turns.h): the first carries the
  // decision, and the history, attempts, actions and escalations below are its. Just this
  // message when it was answered on its own.
  std::vector<std::int64_t> turn;
  std::vector<MediaRow> media;  // the message's own files (store/media.h), in order
  std::size_t history_limit = 0;
  std::vector<HistoryEntry> history;  // the conversation before the turn, oldest first
  std::vector<TrailAttempt> attempts;
  std::vector<TrailAction> actions;
  std::vector<EscalationRow> escalations;
  std::vector<NoteRow> notes;       // staff's internal notes on those escalations, oldest first
  std::vector<AuditRow> audit;      // the message's events, in order
  std::optional<TrailChain> chain;  // none when the message has no audit events
};

// The trail of v_messages.message_id `message_id`, with at most `history_limit` history
// entries (the agent's llm.history_messages). not_found when there is no such message.
[[nodiscard]] Result<Trail> load_trail(Database& db, std::int64_t message_id, std::size_t history_limit);

// The messages of `channels` whose channel id (v_messages.provider_message_id) is
// `provider_id`: at most one per channel, in message id order.
[[nodiscard]] Result<std::vector<std::int64_t>> messages_with_provider_id(Database& db, const std::string& provider_id,
                                                                          const std::vector<std::string>& channels);

}  // namespace dispatchd::store
