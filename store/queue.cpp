#include "store/queue.h"

#include "common/json_out.h"
#include "store/audit.h"
#include "store/desk.h"
#include "store/internal/action_status.h"
#include "store/internal/sql.h"

namespace dispatchd::store {
namespace {

struct Item {
  std::int64_t message_id = 0;
  EscalationStatus status = EscalationStatus::open;
  std::string assignee;
};

Result<Item> load(Database& db, std::int64_t id) {
  auto state = claim_state(db, id);
  if (!state) return std::unexpected(state.error());
  return Item{state->message_id, state->status, state->holder.value_or("")};
}

// Whether `who` may act on the item: it is still open, and not held by someone else.
Result<void> check_actionable(const Item& item, std::int64_t id, const std::string& who) {
  if (item.status == EscalationStatus::resolved || item.status == EscalationStatus::dismissed) {
    return std::unexpected(
        Error::refused("escalation " + std::to_string(id) + " is already " + std::string(to_sql(item.status))));
  }
  if (item.status == EscalationStatus::claimed && item.assignee != who) {
    return std::unexpected(Error::refused("escalation " + std::to_string(id) + " is claimed by " + item.assignee));
  }
  return {};
}

// The escalation's outbox row still waiting for a decision, if any.
Result<std::optional<std::int64_t>> pending_proposal(Database& db, std::int64_t escalation_id) {
  auto select = Query::prepare(db, "SELECT id FROM actions WHERE escalation_id = ? AND status = 'proposed'");
  if (!select) return std::unexpected(select.error());
  select->bind(1, escalation_id);
  auto row = select->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(select->integer(0));
}

Result<void> reject_proposal(Database& db, std::int64_t escalation_id, const std::string& who, const std::string& why,
                             Time now) {
  auto proposal = pending_proposal(db, escalation_id);
  if (!proposal) return std::unexpected(proposal.error());
  if (*proposal)
    DISPATCHD_TRY(
        move_action(db, **proposal, {ActionStatus::proposed, ActionStatus::rejected, why, std::nullopt}, now, who));
  return {};
}

// Marks the item resolved or dismissed after check_actionable passed.
Result<void> close(Database& db, std::int64_t id, const Item& item, const std::string& who, EscalationStatus status,
                   const std::string& resolution, Time now) {
  auto update = Query::prepare(
      db, "UPDATE escalations SET status = ?, assignee = ?, resolution = ?, resolved_at = ? WHERE id = ?");
  if (!update) return std::unexpected(update.error());
  update->bind(1, status).bind(2, who).bind(3, resolution).bind(4, format_time(now)).bind(5, id);
  DISPATCHD_TRY(update->run());
  const auto detail =
      JsonOut().begin_object().field("escalation", id).field("resolution", resolution).end_object().str();
  const AuditKind kind = status == EscalationStatus::resolved ? AuditKind::staff_resolved : AuditKind::staff_dismissed;
  DISPATCHD_TRY(append_audit(db, {format_time(now), kind, item.message_id, who, detail}));
  return {};
}

}  // namespace

Result<std::int64_t> open_escalation(Database& db, const NewEscalation& e, Time now) {
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    auto insert = Query::prepare(
        db,
        "INSERT INTO escalations(message_id, reason, detail, proposed_action, created_at) VALUES (?,?,?,?,?)"
        " RETURNING id");
    if (!insert) return std::unexpected(insert.error());
    std::optional<std::string> proposed = e.proposed_action;
    if (!proposed && e.proposal) proposed = e.proposal->arguments;
    insert->bind(1, e.message_id).bind(2, e.reason).bind(3, e.detail).bind(4, proposed);
    insert->bind(5, format_time(now));
    auto inserted = insert->inserted_id();
    if (!inserted) return std::unexpected(inserted.error());
    const std::int64_t id = *inserted;
    // The audit row names the message; the escalation id goes in the detail.
    DISPATCHD_TRY(append_audit(
        db, {format_time(now), AuditKind::escalation, e.message_id, "dispatchd",
             JsonOut().begin_object().field("escalation", id).field("reason", to_sql(e.reason)).end_object().str()}));
    if (e.proposal) {
      NewAction proposal = *e.proposal;
      proposal.status = ActionStatus::proposed;
      proposal.escalation_id = id;
      DISPATCHD_TRY(add_action(db, proposal, now));
    }
    return id;
  });
}

Result<std::int64_t> escalate_message(Database& db, const NewEscalation& e,
                                      const std::optional<NewAction>& holding_reply, Time now) {
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    auto id = open_escalation(db, e, now);
    if (!id) return std::unexpected(id.error());
    if (holding_reply) {
      auto action = add_action(db, *holding_reply, now);
      if (!action) return std::unexpected(action.error());
    }
    DISPATCHD_TRY(finish(db, e.message_id, Outcome::escalated, now));
    return *id;
  });
}

Result<void> claim_escalation(Database& db, std::int64_t id, const std::string& who, Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    auto item = load(db, id);
    if (!item) return std::unexpected(item.error());
    DISPATCHD_TRY(check_actionable(*item, id, who));
    auto update =
        Query::prepare(db, "UPDATE escalations SET status = 'claimed', assignee = ?, claimed_at = ? WHERE id = ?");
    if (!update) return std::unexpected(update.error());
    update->bind(1, who).bind(2, format_time(now)).bind(3, id);
    DISPATCHD_TRY(update->run());
    const auto detail = JsonOut().begin_object().field("escalation", id).end_object().str();
    DISPATCHD_TRY(append_audit(db, {format_time(now), AuditKind::staff_claim, item->message_id, who, detail}));
    return {};
  });
}

Result<void> close_escalation(Database& db, std::int64_t id, const std::string& who, EscalationStatus status,
                              const std::string& resolution, Time now) {
  if (status != EscalationStatus::resolved && status != EscalationStatus::dismissed)
    return std::unexpected(Error::internal("an escalation closes as resolved or dismissed"));
  return transaction<void>(db, [&]() -> Result<void> {
    auto item = load(db, id);
    if (!item) return std::unexpected(item.error());
    DISPATCHD_TRY(check_actionable(*item, id, who));
    DISPATCHD_TRY(reject_proposal(db, id, who, "escalation " + std::string(to_sql(status)) + " by " + who, now));
    return close(db, id, *item, who, status, resolution, now);
  });
}

Result<std::int64_t> approve_escalation(Database& db, std::int64_t id, const std::string& who, Time now) {
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    auto item = load(db, id);
    if (!item) return std::unexpected(item.error());
    DISPATCHD_TRY(check_actionable(*item, id, who));
    auto proposal = pending_proposal(db, id);
    if (!proposal) return std::unexpected(proposal.error());
    if (!*proposal)
      return std::unexpected(Error::refused("escalation " + std::to_string(id) + " has no proposed action to approve"));
    DISPATCHD_TRY(move_action(db, **proposal,
                              {ActionStatus::proposed, ActionStatus::approved, std::nullopt, std::nullopt}, now, who));
    DISPATCHD_TRY(
        close(db, id, *item, who, EscalationStatus::resolved, std::string(to_sql(Resolution::approved)), now));
    return **proposal;
  });
}

Result<std::int64_t> resolve_with_action(Database& db, std::int64_t id, const std::string& who, NewAction action,
                                         Resolution how, Time now) {
  const std::string resolution(to_sql(how));
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    auto item = load(db, id);
    if (!item) return std::unexpected(item.error());
    DISPATCHD_TRY(check_actionable(*item, id, who));
    DISPATCHD_TRY(reject_proposal(db, id, who, "replaced by " + who + " (" + resolution + ")", now));
    action.message_id = item->message_id;
    action.escalation_id = id;
    action.status = ActionStatus::approved;
    action.created_by = who;
    auto action_id = add_action(db, action, now);
    if (!action_id) return std::unexpected(action_id.error());
    DISPATCHD_TRY(close(db, id, *item, who, EscalationStatus::resolved, resolution, now));
    return *action_id;
  });
}

}  // namespace dispatchd::store
