#include "store/desk.h"

#include "common/json_out.h"
#include "store/audit.h"
#include "store/internal/sql.h"
#include "store/internal/view_rows.h"
#include "store/transaction.h"

namespace dispatchd::store {
namespace {

// The claim is still the one the rule saw: an UPDATE that changed no row lost a race.
Result<void> changed_one(const Query& update, std::int64_t id) {
  if (update.changes() == 1) return {};
  return std::unexpected(Error::refused("escalation " + std::to_string(id) + " changed meanwhile; look at it again"));
}

}  // namespace

std::string_view to_text(HandOverKind kind) {
  switch (kind) {
    case HandOverKind::release: return "release";
    case HandOverKind::takeover: return "takeover";
    case HandOverKind::reassign: return "reassign";
  }
  return "release";
}

namespace {

// The audit event of a hand-over, and back.
AuditKind audit_kind_of(HandOverKind kind) {
  switch (kind) {
    case HandOverKind::release: return AuditKind::staff_release;
    case HandOverKind::takeover: return AuditKind::staff_takeover;
    case HandOverKind::reassign: return AuditKind::staff_reassign;
  }
  return AuditKind::staff_release;
}

std::optional<HandOverKind> hand_over_of(AuditKind event) {
  for (const auto kind : {HandOverKind::release, HandOverKind::takeover, HandOverKind::reassign})
    if (audit_kind_of(kind) == event) return kind;
  return std::nullopt;
}

}  // namespace

std::optional<HandOverKind> hand_over_kind(std::string_view word) {
  for (const auto kind : {HandOverKind::release, HandOverKind::takeover, HandOverKind::reassign})
    if (to_text(kind) == word) return kind;
  return std::nullopt;
}

std::string_view to_text(HandOverRule rule) {
  switch (rule) {
    case HandOverRule::holder: return "holder";
    case HandOverRule::idle: return "idle";
    case HandOverRule::holder_revoked: return "holder_revoked";
    case HandOverRule::admin: return "admin";
  }
  return "holder";
}

std::optional<HandOverRule> hand_over_rule(std::string_view word) {
  for (const auto rule : {HandOverRule::holder, HandOverRule::idle, HandOverRule::holder_revoked, HandOverRule::admin})
    if (to_text(rule) == word) return rule;
  return std::nullopt;
}

Result<ClaimState> claim_state(Database& db, std::int64_t id) {
  auto select = Query::prepare(db,
                               "SELECT e.message_id, e.status, e.assignee, e.claimed_at,"
                               " CASE WHEN a.revoked_at IS NULL THEN 0 ELSE 1 END"
                               " FROM escalations e LEFT JOIN staff_accounts a ON a.name = e.assignee WHERE e.id = ?");
  if (!select) return std::unexpected(select.error());
  select->bind(1, id);
  auto row = select->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::unexpected(Error::not_found("no escalation " + std::to_string(id)));
  const auto status = from_sql<EscalationStatus>(select->text(1));
  if (!status)
    return std::unexpected(
        Error{ErrorKind::corrupt, "escalation " + std::to_string(id) + " has the unknown status " + select->text(1)});
  ClaimState out{select->integer(0), *status, select->optional_text(2), std::nullopt, select->integer(4) != 0};
  if (const auto at = select->optional_text(3)) out.active_at = parse_time(*at);
  return out;
}

Result<void> record_hand_over(Database& db, std::int64_t id, const HandOver& h, Time now) {
  auto state = claim_state(db, id);
  if (!state) return std::unexpected(state.error());
  auto update = Query::prepare(
      db, h.to ? "UPDATE escalations SET assignee = ?1, claimed_at = ?2 WHERE id = ?3 AND status = 'claimed'"
                 " AND assignee = ?4"
               : "UPDATE escalations SET status = 'open', assignee = ?1, claimed_at = ?2 WHERE id = ?3"
                 " AND status = 'claimed' AND assignee = ?4");
  if (!update) return std::unexpected(update.error());
  update->bind(1, h.to).bind(2, h.to ? std::optional<std::string>(format_time(now)) : std::nullopt);
  update->bind(3, id).bind(4, h.from);
  DISPATCHD_TRY(update->run());
  DISPATCHD_TRY(changed_one(*update, id));
  const auto detail = JsonOut()
                          .begin_object()
                          .field("escalation", id)
                          .field("from", h.from)
                          .field("to", h.to)
                          .field("rule", to_text(h.rule))
                          .field("note", h.note)
                          .end_object()
                          .str();
  DISPATCHD_TRY(append_audit(db, {format_time(now), audit_kind_of(h.kind), state->message_id, h.actor, detail}));
  return {};
}

Result<std::vector<HandOverRow>> list_hand_overs(Database& db, std::int64_t escalation_id) {
  auto query =
      Query::prepare(db, per_backend(db.backend(), [](Backend b) {
                       const auto field = [b](std::string_view key) { return sql::json_text(b, "detail", key); };
                       return "SELECT audit_id, at, event, actor, " + field("from") + ", " + field("to") + ", " +
                              field("rule") + ", " + field("note") +
                              " FROM v_audit WHERE message_id = (SELECT message_id FROM v_escalations"
                              " WHERE escalation_id = ?1) AND event IN ('staff_release', 'staff_takeover',"
                              " 'staff_reassign') AND " +
                              sql::json_integer(b, "detail", "escalation") + " = ?1 ORDER BY audit_id";
                     }));
  if (!query) return std::unexpected(query.error());
  query->bind(1, escalation_id);
  return collect<HandOverRow>(*query, [](const Query& q) -> Result<HandOverRow> {
    auto event = q.state<AuditKind>(2);
    if (!event) return std::unexpected(event.error());
    const auto kind = hand_over_of(*event);
    const std::string rule_text = q.optional_text(6).value_or("");
    const auto rule = hand_over_rule(rule_text);
    if (!kind || !rule)
      return std::unexpected(Error::internal("a hand-over's rule this dispatchd does not know: " + rule_text));
    return HandOverRow{q.integer(0),       q.text(1),          *kind, q.text(3),
                       q.optional_text(4), q.optional_text(5), *rule, q.optional_text(7).value_or("")};
  });
}

Result<std::int64_t> add_note(Database& db, std::int64_t escalation_id, const std::string& author,
                              const std::string& text, Time now) {
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    auto state = claim_state(db, escalation_id);
    if (!state) return std::unexpected(state.error());
    auto insert = Query::prepare(db,
                                 "INSERT INTO escalation_notes(escalation_id, message_id, author, text, created_at)"
                                 " VALUES (?,?,?,?,?) RETURNING id");
    if (!insert) return std::unexpected(insert.error());
    insert->bind(1, escalation_id).bind(2, state->message_id).bind(3, author).bind(4, text).bind(5, format_time(now));
    auto id = insert->inserted_id();
    if (!id) return std::unexpected(id.error());
    // The holder's note is activity on the case: the idle clock starts again.
    if (state->status == EscalationStatus::claimed && state->holder == author) {
      auto touch = Query::prepare(db, "UPDATE escalations SET claimed_at = ? WHERE id = ?");
      if (!touch) return std::unexpected(touch.error());
      touch->bind(1, format_time(now)).bind(2, escalation_id);
      DISPATCHD_TRY(touch->run());
    }
    const auto detail = JsonOut()
                            .begin_object()
                            .field("escalation", escalation_id)
                            .field("note", *id)
                            .field("text", text)
                            .end_object()
                            .str();
    DISPATCHD_TRY(append_audit(db, {format_time(now), AuditKind::staff_note, state->message_id, author, detail}));
    return *id;
  });
}

Result<std::vector<NoteRow>> list_notes(Database& db, std::int64_t escalation_id) {
  auto query = Query::prepare(db,
                              "SELECT note_id, escalation_id, author, text, created_at FROM v_notes"
                              " WHERE escalation_id = ? ORDER BY note_id");
  if (!query) return std::unexpected(query.error());
  query->bind(1, escalation_id);
  return collect<NoteRow>(*query, [](const Query& q) {
    return NoteRow{q.integer(0), q.integer(1), q.text(2), q.text(3), q.text(4)};
  });
}

}  // namespace dispatchd::store
