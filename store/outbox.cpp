#include "store/outbox.h"

#include <algorithm>

#include "common/json_out.h"
#include "store/audit.h"
#include "store/internal/action_status.h"
#include "store/internal/locks.h"
#include "store/internal/send_pricing_rows.h"
#include "store/internal/sql.h"
#include "store/internal/turn_rows.h"
#include "store/queue.h"

namespace dispatchd::store {

Result<std::int64_t> move_action(Database& db, std::int64_t id, const ActionChange& c, Time now,
                                 const std::string& actor) {
  DISPATCHD_TRY(internal::lock_audit_tail(db));  // before the row (store/internal/locks.h)
  auto update = Query::prepare(
      db,
      "UPDATE actions SET status = ?, error = coalesce(?, error),"
      " provider_message_id = coalesce(?, provider_message_id), updated_at = ? WHERE id = ? AND status = ?"
      " RETURNING message_id");
  if (!update) return std::unexpected(update.error());
  update->bind(1, c.to).bind(2, c.error).bind(3, c.provider_message_id).bind(4, format_time(now)).bind(5, id);
  update->bind(6, c.from);
  auto row = update->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) {
    auto status = Query::prepare(db, "SELECT status FROM actions WHERE id = ?");
    if (!status) return std::unexpected(status.error());
    status->bind(1, id);
    auto found = status->step();
    if (!found) return std::unexpected(found.error());
    if (!*found) return std::unexpected(Error::not_found("no action " + std::to_string(id)));
    return std::unexpected(Error::refused("action " + std::to_string(id) + " is " + status->text(0) + ", not " +
                                          std::string(to_sql(c.from))));
  }
  const std::int64_t message_id = update->integer(0);
  if (c.from == ActionStatus::proposed && c.to == ActionStatus::approved) {
    // Queued now, not when it was proposed: behind every row there is, the holding reply
    // sent while staff decided included (begin_send's k_in_line).
    auto queue = Query::prepare(db, "UPDATE actions SET queued = (SELECT max(id) FROM actions) + 1 WHERE id = ?");
    if (!queue) return std::unexpected(queue.error());
    queue->bind(1, id);
    DISPATCHD_TRY(queue->run());
  }
  JsonOut detail;
  detail.begin_object().field("action", id).field("from", to_sql(c.from)).field("to", to_sql(c.to));
  detail.field_if_set("error", c.error).field_if_set("provider_message_id", c.provider_message_id).end_object();
  DISPATCHD_TRY(append_audit(db, {format_time(now), AuditKind::action, message_id, actor, detail.str()}));
  return message_id;
}

namespace {

// A message whose action was the pending step is done once the send has an outcome.
Result<void> finish_if_decided(Database& db, std::int64_t message_id, Outcome outcome, Time now) {
  static const auto k_done =
      internal::turn_change("UPDATE inbox SET state = 'done', outcome = ?2 WHERE ", " AND state = 'decided'");
  auto changed = internal::change_turn(db, k_done, message_id, [&](Query& q) { q.bind(2, outcome); });
  if (!changed) return std::unexpected(changed.error());
  for (const auto id : *changed) {
    DISPATCHD_TRY(append_audit(db, {format_time(now), AuditKind::done, id, "dispatchd",
                                    JsonOut().begin_object().field("outcome", to_sql(outcome)).end_object().str()}));
  }
  return {};
}

// What a tool call's row adds to a plain send's: its server (none for a message), and the
// reply to queue once it succeeded.
struct ToolRow {
  std::optional<std::string> server;
  std::optional<std::string> follow_up;
  std::optional<std::string> recipient;
  std::string action;
  std::string arguments;
};

Result<ToolRow> tool_row(Database& db, std::int64_t id) {
  auto row =
      Query::prepare(db, "SELECT tool_server, follow_up, recipient, action, arguments FROM actions WHERE id = ?");
  if (!row) return std::unexpected(row.error());
  row->bind(1, id);
  auto found = row->step();
  if (!found) return std::unexpected(found.error());
  if (!*found) return std::unexpected(Error::not_found("no action " + std::to_string(id)));
  return ToolRow{row->optional_text(0), row->optional_text(1), row->optional_text(2), row->text(3), row->text(4)};
}

Result<std::int64_t> end_with_escalation(Database& db, std::int64_t id, ActionStatus to, EscalationReason reason,
                                         const std::string& error, Time now) {
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    std::optional<std::string> proposed;
    if (reason == EscalationReason::send_failed || reason == EscalationReason::window_closed) {
      auto tool = tool_row(db, id);
      if (!tool) return std::unexpected(tool.error());
      if (tool->server) reason = EscalationReason::tool_failed;
      // What could not be sent, for staff to send another way (a template).
      if (reason == EscalationReason::window_closed) proposed = tool->arguments;
    }
    auto message_id = move_action(db, id, {ActionStatus::sending, to, error, std::nullopt}, now);
    if (!message_id) return std::unexpected(message_id.error());
    const auto detail = JsonOut().begin_object().field("action", id).field("error", error).end_object().str();
    auto escalation = open_escalation(db, {*message_id, reason, detail, std::move(proposed), std::nullopt}, now);
    if (!escalation) return std::unexpected(escalation.error());
    DISPATCHD_TRY(finish_if_decided(db, *message_id, Outcome::escalated, now));
    return *escalation;
  });
}

}  // namespace

Result<std::int64_t> add_action(Database& db, const NewAction& a, Time now) {
  if (a.status != ActionStatus::approved && a.status != ActionStatus::proposed) {
    return std::unexpected(
        Error::internal("a new action is approved or proposed, not " + std::string(to_sql(a.status))));
  }
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    auto count = Query::prepare(db, "SELECT count(*) FROM actions WHERE message_id = ?");
    if (!count) return std::unexpected(count.error());
    count->bind(1, a.message_id);
    DISPATCHD_TRY(count->step());
    const std::string key = "dispatchd-" + std::to_string(a.message_id) + "-" + std::to_string(count->integer(0) + 1);
    auto insert = Query::prepare(
        db,
        "INSERT INTO actions(message_id, escalation_id, action, arguments, recipient, body, status, created_by,"
        " idempotency_key, created_at, updated_at, tool_server, tool_name, follow_up, interactive,"
        " template_message) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id");
    if (!insert) return std::unexpected(insert.error());
    const std::string at = format_time(now);
    insert->bind(1, a.message_id).bind(2, a.escalation_id).bind(3, a.action).bind(4, a.arguments);
    insert->bind(5, a.recipient).bind(6, a.body).bind(7, a.status).bind(8, a.created_by).bind(9, key);
    insert->bind(10, at).bind(11, at).bind(12, a.tool_server).bind(13, a.tool_name).bind(14, a.follow_up);
    insert->bind(15, a.interactive).bind(16, a.template_message);
    auto inserted = insert->inserted_id();
    if (!inserted) return std::unexpected(inserted.error());
    const std::int64_t id = *inserted;
    JsonOut detail;
    detail.begin_object().field("action", id).field("name", a.action).field("to", to_sql(a.status));
    detail.field_if_set("recipient", a.recipient).field_if_set("recipient_written", a.recipient_written);
    detail.field_if_set("tool_server", a.tool_server).field_if_set("tool_name", a.tool_name);
    detail.raw("arguments", a.arguments).end_object();
    DISPATCHD_TRY(append_audit(db, {at, AuditKind::action, a.message_id, a.created_by, detail.str()}));
    return id;
  });
}

Result<std::int64_t> queue_reply(Database& db, NewAction action, Time now) {
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    action.status = ActionStatus::approved;
    auto id = add_action(db, action, now);
    if (!id) return std::unexpected(id.error());
    DISPATCHD_TRY(decide(db, action.message_id, now));
    return *id;
  });
}

namespace {

constexpr std::string_view k_item_columns =
    "SELECT a.id, a.message_id, m.channel, m.conversation_id, coalesce(a.recipient, ''), coalesce(a.body, ''),"
    " a.idempotency_key, a.action, coalesce(a.tool_server, ''), coalesce(a.tool_name, ''),"
    " coalesce(a.interactive, ''), coalesce(a.template_message, '') FROM actions a JOIN inbox m ON m.id = a.message_id";

// A row's lane: its message's channel, or k_tool_lane for a tool call.
constexpr std::string_view k_lane = "(CASE WHEN a.tool_server IS NULL THEN m.channel ELSE 'tools' END)";
static_assert(k_tool_lane == "tools");

// Sends to one counterpart leave in order: a message waits while one queued before it to
// the same recipient on the same channel has no outcome yet ('approved', a retry included,
// or 'sending'). Queued before: a smaller place in line, coalesce(queued, id), and the
// smaller id on a tie (an approved proposal's place is one more than the largest id, which
// the next row added may get as its id). A send that is 'unknown' holds nothing back: its
// request left before anything claimed after it, and staff may take days to resolve it.
// Tool calls (k_tool_lane) are not messages to the counterpart: they neither wait nor hold
// a message back (an act's follow-up reply is queued, and waits, once the tool answered).
// actions_recipient_unsent (migration 0024) holds just the rows the check reads.
constexpr std::string_view k_in_line =
    " AND (a.tool_server IS NOT NULL OR NOT EXISTS (SELECT 1 FROM actions p JOIN inbox pm ON pm.id = p.message_id"
    " WHERE p.recipient = a.recipient AND p.status IN ('approved', 'sending') AND p.tool_server IS NULL"
    " AND pm.channel = m.channel AND (coalesce(p.queued, p.id), p.id) < (coalesce(a.queued, a.id), a.id)))";

OutboxItem item_of(const Query& row) {
  return {row.integer(0), row.integer(1), row.text(2), row.text(3), row.text(4),  row.text(5),
          row.text(6),    row.text(7),    row.text(8), row.text(9), row.text(10), row.text(11)};
}

}  // namespace

Result<std::optional<OutboxItem>> begin_send(Database& db, Time now, const std::string& channel,
                                             const std::string& instance) {
  return transaction<std::optional<OutboxItem>>(db, [&]() -> Result<std::optional<OutboxItem>> {
    // PostgreSQL: the row is locked as it is found, and a row another instance is claiming
    // is skipped, so each send is claimed once and a second claimer takes the next one; the
    // pick drops every lock but the chosen row's (internal::pick_locked).
    const auto scan = [&]() -> Result<std::optional<OutboxItem>> {
      auto pick = Query::prepare(db, per_backend(db.backend(), [](Backend b) {
                                   return std::string(k_item_columns) +
                                          " WHERE a.status = 'approved' AND (?1 = '' OR " + std::string(k_lane) +
                                          " = ?1)" + std::string(k_in_line) +
                                          " ORDER BY a.id"
                                          " LIMIT 1" +
                                          (b == Backend::postgresql ? " FOR NO KEY UPDATE OF a SKIP LOCKED" : "");
                                 }));
      if (!pick) return std::unexpected(pick.error());
      pick->bind(1, channel);
      auto row = pick->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) return std::nullopt;
      return item_of(*pick);
    };
    const auto relock = [&](std::int64_t id) -> Result<bool> {
      auto again = Query::prepare(
          db, "SELECT 1 FROM actions WHERE id = ? AND status = 'approved' FOR NO KEY UPDATE SKIP LOCKED");
      if (!again) return std::unexpected(again.error());
      again->bind(1, id);
      return again->step();
    };
    auto item = internal::pick_locked<OutboxItem>(db, scan, relock);
    if (!item || !*item) return item;
    const std::int64_t id = (*item)->id;
    DISPATCHD_TRY(
        move_action(db, id, {ActionStatus::approved, ActionStatus::sending, std::nullopt, std::nullopt}, now));
    if (!instance.empty()) {
      auto claim = Query::prepare(db, "UPDATE actions SET claimed_by = ? WHERE id = ?");
      if (!claim) return std::unexpected(claim.error());
      claim->bind(1, instance).bind(2, id);
      DISPATCHD_TRY(claim->run());
    }
    return item;
  });
}

Result<void> complete_send(Database& db, std::int64_t id, const std::string& provider_message_id, Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    auto tool = tool_row(db, id);
    if (!tool) return std::unexpected(tool.error());
    auto message_id = move_action(db, id,
                                  {ActionStatus::sending, ActionStatus::sent, std::nullopt,
                                   provider_message_id.empty() ? std::nullopt : std::optional(provider_message_id)},
                                  now);
    if (!message_id) return std::unexpected(message_id.error());
    // The tool did what was decided; its reply goes to the customer now, and the message is
    // done once that is sent.
    if (tool->server && tool->follow_up && tool->recipient) {
      const std::string arguments =
          JsonOut().begin_object().field("after", id).field("text", *tool->follow_up).end_object().str();
      auto reply = add_action(db,
                              {.message_id = *message_id,
                               .action = tool->action,
                               .arguments = arguments,
                               .recipient = tool->recipient,
                               .body = tool->follow_up},
                              now);
      if (!reply) return std::unexpected(reply.error());
      return {};
    }
    return finish_if_decided(db, *message_id, Outcome::replied, now);
  });
}

Result<void> retry_send(Database& db, std::int64_t id, const std::string& error, Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    DISPATCHD_TRY(move_action(db, id, {ActionStatus::sending, ActionStatus::approved, error, std::nullopt}, now));
    return {};
  });
}

Result<std::int64_t> fail_send(Database& db, std::int64_t id, const std::string& error, Time now, SendFailure failure) {
  const EscalationReason reason =
      failure == SendFailure::window_closed ? EscalationReason::window_closed : EscalationReason::send_failed;
  return end_with_escalation(db, id, ActionStatus::failed, reason, error, now);
}

Result<std::int64_t> unknown_send(Database& db, std::int64_t id, const std::string& error, Time now) {
  return end_with_escalation(db, id, ActionStatus::unknown, EscalationReason::delivery_unknown, error, now);
}

Result<DeliveryResult> apply_delivery(Database& db, const DeliveryReport& report, Time now) {
  return transaction<DeliveryResult>(db, [&]() -> Result<DeliveryResult> {
    auto find =
        Query::prepare(db,
                       "SELECT id, message_id, status FROM actions WHERE (?1 <> '' AND provider_message_id = ?1)"
                       " OR (?2 <> '' AND idempotency_key = ?2) ORDER BY id LIMIT 1");
    if (!find) return std::unexpected(find.error());
    find->bind(1, report.provider_message_id).bind(2, report.tracker);
    auto row = find->step();
    if (!row) return std::unexpected(row.error());
    DeliveryResult result;
    if (!*row) return result;
    const std::int64_t id = find->integer(0);
    const std::int64_t message_id = find->integer(1);
    const auto status = from_sql<ActionStatus>(find->text(2));
    if (!status)
      return std::unexpected(
          Error{ErrorKind::corrupt, "action " + std::to_string(id) + " has the unknown status " + find->text(2)});
    result.action_id = id;
    JsonOut detail;
    const std::string_view status_text =
        report.status == DeliveryStatus::other ? std::string_view(report.other_text) : to_sql(report.status);
    detail.begin_object().field("action", id).field("status", status_text);
    detail.field("provider_message_id", report.provider_message_id);
    if (!report.error.empty()) detail.field("error", report.error);
    if (report.pricing) {
      internal::add_pricing_detail(detail, *report.pricing, report.pricing_category_text);
      DISPATCHD_TRY(internal::record_send_pricing(db, id, message_id, *report.pricing, now));
    }
    detail.end_object();
    DISPATCHD_TRY(append_audit(db, {format_time(now), AuditKind::delivery, message_id, "dispatchd", detail.str()}));
    const bool confirmed = report.status == DeliveryStatus::sent || report.status == DeliveryStatus::delivered ||
                           report.status == DeliveryStatus::read;
    if (confirmed && (status == ActionStatus::sending || status == ActionStatus::unknown)) {
      const std::optional<std::string> pid =
          report.provider_message_id.empty() ? std::nullopt : std::optional<std::string>(report.provider_message_id);
      DISPATCHD_TRY(move_action(db, id, {*status, ActionStatus::sent, std::nullopt, pid}, now));
      DISPATCHD_TRY(finish_if_decided(db, message_id, Outcome::replied, now));
    } else if (report.status == DeliveryStatus::failed &&
               (status == ActionStatus::sent || status == ActionStatus::sending || status == ActionStatus::unknown)) {
      DISPATCHD_TRY(move_action(db, id, {*status, ActionStatus::failed, report.error, std::nullopt}, now));
      const auto why = JsonOut().begin_object().field("action", id).field("error", report.error).end_object().str();
      auto escalation =
          open_escalation(db, {message_id, EscalationReason::send_failed, why, std::nullopt, std::nullopt}, now);
      if (!escalation) return std::unexpected(escalation.error());
      result.escalation_id = *escalation;
      DISPATCHD_TRY(finish_if_decided(db, message_id, Outcome::escalated, now));
    }
    return result;
  });
}

Result<std::vector<std::int64_t>> recover_sending(Database& db, Time now,
                                                  std::span<const std::string> lookup_channels) {
  return transaction<std::vector<std::int64_t>>(db, [&]() -> Result<std::vector<std::int64_t>> {
    std::vector<std::int64_t> ids;
    {
      auto stuck = Query::prepare(db, "SELECT a.id, " + std::string(k_lane) +
                                          " FROM actions a JOIN inbox m ON m.id = a.message_id"
                                          " WHERE a.status = 'sending' ORDER BY a.id");
      if (!stuck) return std::unexpected(stuck.error());
      while (true) {
        auto row = stuck->step();
        if (!row) return std::unexpected(row.error());
        if (!*row) break;
        if (std::ranges::find(lookup_channels, stuck->text(1)) != lookup_channels.end()) continue;
        ids.push_back(stuck->integer(0));
      }
    }
    for (const auto id : ids) {
      DISPATCHD_TRY(unknown_send(db, id, "dispatchd stopped between marking the send and recording its result", now));
    }
    return ids;
  });
}

Result<std::vector<OutboxItem>> sending_items(Database& db, const std::string& channel, const std::string& claimed_by) {
  auto pick =
      Query::prepare(db, std::string(k_item_columns) + " WHERE a.status = 'sending' AND " + std::string(k_lane) +
                             " = ?1"
                             " AND (?2 = '' OR a.claimed_by = ?2) ORDER BY a.id");
  if (!pick) return std::unexpected(pick.error());
  pick->bind(1, channel).bind(2, claimed_by);
  std::vector<OutboxItem> items;
  while (true) {
    auto row = pick->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    items.push_back(item_of(*pick));
  }
  return items;
}

}  // namespace dispatchd::store
