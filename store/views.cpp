#include "store/views.h"

#include "store/internal/attempt_row.h"
#include "store/internal/sql.h"
#include "store/internal/view_rows.h"

namespace dispatchd::store {
Result<EscalationRow> read_escalation(const Query& q) {
  const auto reason = q.state<EscalationReason>(2);
  if (!reason) return std::unexpected(reason.error());
  const auto status = q.state<EscalationStatus>(4);
  if (!status) return std::unexpected(status.error());
  return EscalationRow{q.integer(0),
                       q.integer(1),
                       *reason,
                       q.optional_text(3),
                       *status,
                       q.optional_text(5),
                       q.optional_text(6),
                       q.optional_text(7),
                       q.text(8),
                       q.optional_text(9),
                       q.optional_text(10),
                       q.text(11),
                       q.text(12),
                       q.text(13),
                       q.optional_text(14)};
}

Result<MessageRow> read_message(const Query& q) {
  const auto state = q.state<InboxState>(7);
  if (!state) return std::unexpected(state.error());
  const auto outcome = q.state<Outcome>(8);
  if (!outcome) return std::unexpected(outcome.error());
  return MessageRow{q.integer(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5), q.text(6), *state, *outcome};
}

Result<ActionRow> read_action(const Query& q) {
  const auto status = q.state<ActionStatus>(6);
  if (!status) return std::unexpected(status.error());
  return ActionRow{q.integer(0),       q.integer(1),       q.text(2), q.text(3),
                   q.optional_text(4), q.optional_text(5), *status,   q.text(7),
                   q.optional_text(8), q.optional_text(9), q.text(10)};
}

Result<AttemptRow> read_attempt(const Query& q) {
  const auto verdict = q.state<Verdict>(4);
  if (!verdict) return std::unexpected(verdict.error());
  return AttemptRow{.attempt = q.integer(0),
                    .provider = q.text(1),
                    .model = q.text(2),
                    .raw_output = q.optional_text(3),
                    .verdict = *verdict,
                    .errors = q.text(5),
                    .error_class = q.optional_text(6),
                    .latency_ms = q.optional_integer(7),
                    .input_tokens = q.optional_integer(8),
                    .output_tokens = q.optional_integer(9),
                    .finish_reason = q.optional_text(10),
                    .created_at = q.text(11),
                    .cached_input_tokens = q.optional_integer(12),
                    .cache_write_tokens = q.optional_integer(13),
                    .reasoning_tokens = q.optional_integer(14),
                    .cost_usd = q.optional_real(15),
                    .media_count = q.integer(16),
                    .media_bytes = q.integer(17)};
}

Result<std::vector<EscalationRow>> list_escalations(Database& db, const EscalationFilter& filter) {
  // Only the filter's conditions, written out: "?1 IS NULL OR status = ?1" would hide them
  // from the planner, which then scans every escalation for a page.
  // Parameters are numbered in the order they appear: PostgreSQL prepares a statement with
  // every parameter up to the largest and must find each in the text. Its LIMIT takes NULL,
  // not -1, for none; its WHERE a boolean, not 1.
  const bool postgresql = db.backend() == Backend::postgresql;
  std::string where = postgresql ? "WHERE true" : "WHERE 1";
  int parameters = 0;
  const auto next = [&parameters] { return "?" + std::to_string(++parameters); };
  if (filter.status) where += " AND e.status = " + next();
  if (filter.reason) where += " AND e.reason = " + next();
  if (filter.channel) where += " AND m.channel = " + next();
  if (filter.after)
    where +=
        " AND (e.created_at, e.escalation_id) > (SELECT created_at, id FROM escalations WHERE id = " + next() + ")";
  const std::string limit = next();
  auto query = Query::prepare(
      db, std::string(k_escalation_columns) + where + " ORDER BY e.created_at, e.escalation_id LIMIT " + limit);
  if (!query) return std::unexpected(query.error());
  int bound = 0;
  if (filter.status) query->bind(++bound, *filter.status);
  if (filter.reason) query->bind(++bound, *filter.reason);
  if (filter.channel) query->bind(++bound, *filter.channel);
  if (filter.after) query->bind(++bound, *filter.after);
  if (filter.limit || !postgresql) {
    query->bind(++bound, filter.limit.value_or(-1));
  } else {
    query->bind(++bound, std::optional<std::int64_t>());
  }
  return collect<EscalationRow>(*query, read_escalation);
}

Result<EscalationCase> show_escalation(Database& db, std::int64_t id) {
  EscalationCase out;
  {
    auto query = Query::prepare(db, std::string(k_escalation_columns) + "WHERE e.escalation_id = ?");
    if (!query) return std::unexpected(query.error());
    query->bind(1, id);
    auto row = query->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return std::unexpected(Error::not_found("no escalation " + std::to_string(id)));
    auto escalation = read_escalation(*query);
    if (!escalation) return std::unexpected(escalation.error());
    out.escalation = std::move(*escalation);
  }
  {
    auto query =
        Query::prepare(db, std::string(k_message_columns) +
                               "FROM v_messages WHERE conversation_id = (SELECT conversation_id FROM v_messages"
                               " WHERE message_id = ?1) AND message_id <= ?1 ORDER BY message_id");
    if (!query) return std::unexpected(query.error());
    query->bind(1, out.escalation.message_id);
    auto rows = collect<MessageRow>(*query, read_message);
    if (!rows) return std::unexpected(rows.error());
    out.conversation = std::move(*rows);
    if (out.conversation.empty()) return std::unexpected(Error::internal("the escalation's message is missing"));
    out.message = out.conversation.back();
  }
  {
    auto query =
        Query::prepare(db, std::string(k_attempt_columns) + "FROM v_attempts WHERE message_id = ? ORDER BY attempt");
    if (!query) return std::unexpected(query.error());
    query->bind(1, out.escalation.message_id);
    auto rows = collect<AttemptRow>(*query, [](const Query& q) { return read_attempt(q); });
    if (!rows) return std::unexpected(rows.error());
    out.attempts = std::move(*rows);
  }
  {
    auto query =
        Query::prepare(db, std::string(k_action_columns) + "FROM v_actions WHERE message_id = ? ORDER BY action_id");
    if (!query) return std::unexpected(query.error());
    query->bind(1, out.escalation.message_id);
    auto rows = collect<ActionRow>(*query, read_action);
    if (!rows) return std::unexpected(rows.error());
    out.actions = std::move(*rows);
  }
  {
    // What left (or is leaving) for the customer: not proposals waiting or rejected.
    auto query = Query::prepare(
        db, std::string(k_action_columns) +
                "FROM v_actions WHERE message_id IN (SELECT message_id FROM v_messages WHERE conversation_id = ?1"
                " AND message_id <= ?2) AND status NOT IN ('proposed', 'rejected')"
                " ORDER BY action_id");
    if (!query) return std::unexpected(query.error());
    query->bind(1, out.message.conversation_id).bind(2, out.escalation.message_id);
    auto rows = collect<ActionRow>(*query, read_action);
    if (!rows) return std::unexpected(rows.error());
    out.sent = std::move(*rows);
  }
  auto notes = list_notes(db, id);
  if (!notes) return std::unexpected(notes.error());
  out.notes = std::move(*notes);
  auto hand_overs = list_hand_overs(db, id);
  if (!hand_overs) return std::unexpected(hand_overs.error());
  out.hand_overs = std::move(*hand_overs);
  auto claim = claim_state(db, id);
  if (!claim) return std::unexpected(claim.error());
  out.claim = std::move(*claim);
  auto media = list_media(db, out.escalation.message_id);
  if (!media) return std::unexpected(media.error());
  out.media = std::move(*media);
  return out;
}

Result<std::vector<EscalationEvent>> escalation_events(Database& db, std::int64_t after, std::int64_t up_to,
                                                       int limit) {
  auto query = Query::prepare(db, per_backend(db.backend(), [](Backend b) {
                                return "SELECT a.audit_id, a.event, e.escalation_id, e.status, e.assignee, e.reason"
                                       " FROM v_audit a JOIN v_escalations e ON e.escalation_id = " +
                                       sql::json_integer(b, "a.detail", "escalation") +
                                       " WHERE a.audit_id > ? AND a.audit_id <= ?"
                                       " AND a.event IN ('escalation', 'staff_claim', 'staff_resolved',"
                                       " 'staff_dismissed', 'staff_release', 'staff_takeover', 'staff_reassign',"
                                       " 'staff_note') ORDER BY a.audit_id LIMIT ?";
                              }));
  if (!query) return std::unexpected(query.error());
  query->bind(1, after).bind(2, up_to).bind(3, limit);
  return collect<EscalationEvent>(*query, [](const Query& q) -> Result<EscalationEvent> {
    const auto status = q.state<EscalationStatus>(3);
    if (!status) return std::unexpected(status.error());
    const auto reason = q.state<EscalationReason>(5);
    if (!reason) return std::unexpected(reason.error());
    const auto change = q.state<AuditKind>(1);
    if (!change) return std::unexpected(change.error());
    return EscalationEvent{
        q.integer(0), *change == AuditKind::escalation, q.integer(2), *status, q.optional_text(4), *reason, *change};
  });
}

Result<std::int64_t> last_audit_id(Database& db) {
  auto query = Query::prepare(db, "SELECT coalesce(max(id), 0) FROM audit");
  if (!query) return std::unexpected(query.error());
  auto row = query->step();
  if (!row) return std::unexpected(row.error());
  return query->integer(0);
}

Result<std::vector<AuditRow>> list_audit(Database& db, std::optional<std::int64_t> message_id,
                                         const std::optional<std::string>& since) {
  // Each parameter compared first, IS NULL after: PostgreSQL types a parameter where it
  // first meets it, and `? IS NULL` says nothing about its type.
  auto query = Query::prepare(db,
                              "SELECT audit_id, at, event, message_id, actor, detail, prev_hash, hash FROM v_audit"
                              " WHERE (message_id = ?1 OR ?1 IS NULL) AND (at >= ?2 OR ?2 IS NULL) ORDER BY audit_id");
  if (!query) return std::unexpected(query.error());
  query->bind(1, message_id).bind(2, since);
  return collect<AuditRow>(*query, [](const Query& q) {
    return AuditRow{
        q.integer(0), q.text(1), q.text(2), from_sql<AuditKind>(q.text(2)), q.optional_integer(3), q.text(4),
        q.text(5),    q.text(6), q.text(7)};
  });
}

}  // namespace dispatchd::store
