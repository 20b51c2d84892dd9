#include "store/trail.h"

#include <map>
#include <type_traits>

#include "store/internal/attempt_row.h"
#include "store/internal/sql.h"
#include "store/internal/view_rows.h"

namespace dispatchd::store {
namespace {

// Steps `query` to the end, calling `read` on each row.
template <typename Read>
Result<void> each_row(Query& query, Read read) {
  while (true) {
    auto row = query.step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return {};
    if constexpr (std::is_same_v<std::invoke_result_t<Read&, const Query&>, Result<void>>) {
      DISPATCHD_TRY(read(query));
    } else {
      read(query);
    }
  }
}

Result<Query> prepared(Database& db, std::string_view sql, std::int64_t message_id) {
  auto query = Query::prepare(db, sql);
  if (!query) return std::unexpected(query.error());
  query->bind(1, message_id);
  return query;
}

// v_messages with the message type and the cost, which the staff reads leave out.
Result<bool> load_message(Database& db, std::int64_t id, Trail& out) {
  auto q = prepared(
      db, std::string(k_message_columns) + ", message_type, cost_usd FROM v_messages WHERE message_id = ?", id);
  if (!q) return std::unexpected(q.error());
  auto row = q->step();
  if (!row || !*row) return row;
  auto message = read_message(*q);
  if (!message) return std::unexpected(message.error());
  out.message = std::move(*message);
  out.message_type = q->optional_text(9);
  out.cost_usd = q->optional_real(10);
  return true;
}

// The message's turn: its first message, then the others, by inbox_turn.
Result<void> read_turn(Database& db, std::int64_t id, Trail& out) {
  auto q = prepared(db,
                    "SELECT id FROM inbox WHERE turn_id = (SELECT turn_id FROM inbox WHERE id = ?1)"
                    " ORDER BY id",
                    id);
  if (!q) return std::unexpected(q.error());
  DISPATCHD_TRY(each_row(*q, [&](const Query& r) { out.turn.push_back(r.integer(0)); }));
  if (out.turn.empty()) out.turn.push_back(id);
  return {};
}

// v_attempts with the request summary, which only the table keeps.
Result<void> read_attempts(Database& db, std::int64_t id, Trail& out) {
  auto q = prepared(db,
                    std::string(k_attempt_columns) +
                        ", (SELECT request_summary FROM attempts WHERE id = attempt_id) FROM v_attempts"
                        " WHERE message_id = ? ORDER BY attempt",
                    id);
  if (!q) return std::unexpected(q.error());
  return each_row(*q, [&](const Query& r) -> Result<void> {
    auto attempt = read_attempt(r);
    if (!attempt) return std::unexpected(attempt.error());
    out.attempts.push_back({std::move(*attempt), r.optional_text(18)});
    return {};
  });
}

// v_actions with the escalation and the creation time, which the staff reads leave out.
Result<void> load_actions(Database& db, std::int64_t id, Trail& out) {
  auto q = prepared(db,
                    std::string(k_action_columns) +
                        ", escalation_id, created_at FROM v_actions WHERE message_id = ? ORDER BY action_id",
                    id);
  if (!q) return std::unexpected(q.error());
  return each_row(*q, [&](const Query& r) -> Result<void> {
    auto action = read_action(r);
    if (!action) return std::unexpected(action.error());
    out.actions.push_back(
        {.row = std::move(*action), .escalation_id = r.optional_integer(11), .created_at = r.text(12)});
    return {};
  });
}

// The channel's delivery reports, kept only in the audit trail (store/outbox.h).
Result<void> read_deliveries(Database& db, std::int64_t id, Trail& out) {
  std::map<std::int64_t, TrailAction*> by_id;
  for (auto& a : out.actions) by_id[a.row.id] = &a;
  const auto& sql = per_backend(db.backend(), [](Backend b) {
    const auto field = [b](std::string_view key) { return sql::json_text(b, "detail", key); };
    return "SELECT audit_id, at, " + field("action") + ", " + field("status") + ", " + field("provider_message_id") +
           ", " + field("error") + " FROM v_audit WHERE message_id = ? AND event = 'delivery' ORDER BY audit_id";
  });
  auto q = prepared(db, sql, id);
  if (!q) return std::unexpected(q.error());
  return each_row(*q, [&](const Query& r) {
    const auto action = by_id.find(r.integer(2));
    if (action == by_id.end()) return;
    const auto provider_id = r.optional_text(4);
    const std::string reported = r.text(3);
    action->second->deliveries.push_back(
        {r.integer(0), r.text(1), from_sql<DeliveryStatus>(reported).value_or(DeliveryStatus::other), reported,
         provider_id && !provider_id->empty() ? provider_id : std::nullopt, r.optional_text(5)});
  });
}

// What the channel billed for each action (send_pricing, migration 0033).
Result<void> read_send_pricing(Database& db, std::int64_t id, Trail& out) {
  std::map<std::int64_t, TrailAction*> by_id;
  for (auto& a : out.actions) by_id[a.row.id] = &a;
  auto q = prepared(db,
                    "SELECT action_id, category, billable, pricing_model, pricing_type, origin, cost, currency"
                    " FROM send_pricing WHERE message_id = ? ORDER BY action_id",
                    id);
  if (!q) return std::unexpected(q.error());
  return each_row(*q, [&](const Query& r) {
    const auto action = by_id.find(r.integer(0));
    if (action == by_id.end()) return;
    SendPricing p;
    p.category = pricing_value<PricingCategory>(r.text(1));
    p.billable = r.integer(2) != 0;
    p.model = pricing_value<PricingModel>(r.text(3));
    if (const auto type = r.optional_text(4)) p.type = pricing_value<PricingType>(*type);
    p.origin = r.optional_text(5).value_or("");
    p.cost = r.optional_real(6);
    p.currency = r.text(7);
    action->second->pricing = std::move(p);
  });
}

Result<void> read_escalations(Database& db, std::int64_t id, Trail& out) {
  auto q =
      prepared(db,
               "SELECT escalation_id, message_id, reason, detail, status, proposed_action, assignee, resolution,"
               " created_at, claimed_at, resolved_at FROM v_escalations WHERE message_id = ? ORDER BY escalation_id",
               id);
  if (!q) return std::unexpected(q.error());
  return each_row(*q, [&](const Query& r) -> Result<void> {
    EscalationRow e;
    e.id = r.integer(0);
    e.message_id = r.integer(1);
    auto reason = r.state<EscalationReason>(2);
    if (!reason) return std::unexpected(reason.error());
    e.reason = *reason;
    e.detail = r.optional_text(3);
    auto status = r.state<EscalationStatus>(4);
    if (!status) return std::unexpected(status.error());
    e.status = *status;
    e.proposed_action = r.optional_text(5);
    e.assignee = r.optional_text(6);
    e.resolution = r.optional_text(7);
    e.created_at = r.text(8);
    e.claimed_at = r.optional_text(9);
    e.resolved_at = r.optional_text(10);
    e.channel = out.message.channel;
    e.sender = out.message.sender;
    e.text = out.message.text;
    out.escalations.push_back(std::move(e));
    return {};
  });
}

Result<Trail> read_trail(Database& db, std::int64_t message_id, std::size_t history_limit) {
  Trail out;
  auto found = load_message(db, message_id, out);
  if (!found) return std::unexpected(found.error());
  if (!*found) return std::unexpected(Error::not_found("no message " + std::to_string(message_id)));
  DISPATCHD_TRY(read_turn(db, message_id, out));
  auto media = list_media(db, message_id);
  if (!media) return std::unexpected(media.error());
  out.media = std::move(*media);
  const std::int64_t decision = out.turn.front();
  out.history_limit = history_limit;
  auto history_rows = history(db, decision, history_limit);
  if (!history_rows) return std::unexpected(history_rows.error());
  out.history = std::move(*history_rows);
  DISPATCHD_TRY(read_attempts(db, decision, out));
  DISPATCHD_TRY(load_actions(db, decision, out));
  DISPATCHD_TRY(read_deliveries(db, decision, out));
  DISPATCHD_TRY(read_send_pricing(db, decision, out));
  DISPATCHD_TRY(read_escalations(db, decision, out));
  for (const auto& e : out.escalations) {
    auto notes = list_notes(db, e.id);
    if (!notes) return std::unexpected(notes.error());
    out.notes.insert(out.notes.end(), notes->begin(), notes->end());
  }
  auto audit = list_audit(db, message_id, std::nullopt);
  if (!audit) return std::unexpected(audit.error());
  out.audit = std::move(*audit);
  if (!out.audit.empty()) {
    const std::int64_t from = out.audit.front().id;
    const std::int64_t to = out.audit.back().id;
    auto check = verify_audit_range(db, from, to);
    if (!check) return std::unexpected(check.error());
    out.chain = TrailChain{from, to, std::move(*check)};
  }
  return out;
}

}  // namespace

Result<Trail> load_trail(Database& db, std::int64_t message_id, std::size_t history_limit) {
  // One read transaction, so that the parts agree (a send completing meanwhile shows in the
  // action and its audit event both, or in neither). Inside a caller's transaction, that one.
  if (db.in_transaction()) return read_trail(db, message_id, history_limit);
  DISPATCHD_TRY(internal::exec(db, "BEGIN"));
  auto trail = read_trail(db, message_id, history_limit);
  if (auto ended = internal::exec(db, "COMMIT"); !ended) {
    if (auto undone = internal::exec(db, "ROLLBACK"); !undone) return std::unexpected(undone.error());
    if (trail) return std::unexpected(ended.error());
  }
  return trail;
}

Result<std::vector<std::int64_t>> messages_with_provider_id(Database& db, const std::string& provider_id,
                                                            const std::vector<std::string>& channels) {
  // Each channel named, so that the unique (channel, provider_message_id) index answers it.
  auto query = Query::prepare(db, "SELECT message_id FROM v_messages WHERE channel IN " + sql::text_list(channels) +
                                      " AND provider_message_id = ? ORDER BY message_id");
  if (!query) return std::unexpected(query.error());
  query->bind(1, provider_id);
  std::vector<std::int64_t> ids;
  DISPATCHD_TRY(each_row(*query, [&](const Query& r) { ids.push_back(r.integer(0)); }));
  return ids;
}

}  // namespace dispatchd::store
