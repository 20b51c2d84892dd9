#include "store/escalation_feed.h"

#include "common/json_out.h"
#include "store/audit.h"
#include "store/transaction.h"

#include "store/internal/sql.h"

namespace dispatchd::store {

Result<std::optional<NotifyCursor>> read_notify_cursor(Database& db) {
  auto read = Query::prepare(db, "SELECT last_audit_id, started_at FROM notify_cursor WHERE id = 1");
  if (!read) return std::unexpected(read.error());
  auto row = read->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<NotifyCursor>();
  const auto started = parse_time(read->text(1));
  if (!started)
    return std::unexpected(Error{ErrorKind::corrupt, "notify_cursor.started_at is not a time: " + read->text(1)});
  return std::optional<NotifyCursor>(NotifyCursor{read->integer(0), *started});
}

Result<NotifyCursor> init_notify_cursor(Database& db, Time now) {
  return transaction<NotifyCursor>(db, [&]() -> Result<NotifyCursor> {
    // DO NOTHING: a cursor already there (any earlier start) is kept as it is. (SQLite needs
    // the WHERE to read ON CONFLICT as the upsert's, not a join's.)
    auto insert =
        Query::prepare(db,
                       "INSERT INTO notify_cursor(id, last_audit_id, started_at, updated_at)"
                       " SELECT 1, coalesce(max(id), 0), ?1, ?1 FROM audit WHERE true ON CONFLICT DO NOTHING");
    if (!insert) return std::unexpected(insert.error());
    insert->bind(1, format_time(now));
    DISPATCHD_TRY(insert->run());
    auto cursor = read_notify_cursor(db);
    if (!cursor) return std::unexpected(cursor.error());
    if (!*cursor) return std::unexpected(Error::internal("notify_cursor: the row just written is missing"));
    return **cursor;
  });
}

Result<void> advance_notify_cursor(Database& db, std::int64_t audit_id, Time now) {
  auto update = Query::prepare(
      db,
      "UPDATE notify_cursor SET last_audit_id = CASE WHEN last_audit_id > ?1 THEN last_audit_id ELSE ?1 END,"
      " updated_at = ?2 WHERE id = 1");
  if (!update) return std::unexpected(update.error());
  update->bind(1, audit_id).bind(2, format_time(now));
  DISPATCHD_TRY(update->run());
  if (update->changes() == 0) return std::unexpected(Error::not_found("no notify cursor (init_notify_cursor first)"));
  return {};
}

Result<std::vector<PendingEscalation>> pending_escalations(Database& db, std::int64_t after_audit_id, int limit) {
  // The audit id range is the primary key's: only the events after the cursor are read.
  // The text is bounded here: an email body can be megabytes, a notification needs a line.
  // The blanks trimmed (?3) are bound: the engines spell control characters differently.
  auto select = Query::prepare(
      db, per_backend(db.backend(), [](Backend b) {
        return "SELECT a.id, e.id, e.reason, m.channel, m.sender, substr(ltrim(m.text, ?3), 1, 1000),"
               " e.created_at, a.event"
               " FROM audit a JOIN escalations e ON e.id = CAST(" +
               sql::json_text(b, "a.detail", "escalation") +
               (b == Backend::postgresql ? " AS BIGINT)" : " AS INTEGER)") +
               " JOIN inbox m ON m.id = e.message_id"
               " WHERE a.id > ?1 AND a.event IN ('escalation', 'escalation_breached') ORDER BY a.id LIMIT ?2";
      }));
  if (!select) return std::unexpected(select.error());
  select->bind(1, after_audit_id).bind(2, limit).bind(3, " \t\n\r");
  std::vector<PendingEscalation> out;
  while (true) {
    auto row = select->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    const auto reason = from_sql<EscalationReason>(select->text(2));
    if (!reason)
      return std::unexpected(Error{ErrorKind::corrupt, "escalation " + std::to_string(select->integer(1)) +
                                                           " has the unknown reason " + select->text(2)});
    const NotifyKind kind = select->text(7) == "escalation_breached" ? NotifyKind::breached : NotifyKind::opened;
    out.push_back({kind, select->integer(0), select->integer(1), *reason, select->text(3), select->text(4),
                   select->text(5), select->text(6)});
  }
}

Result<std::int64_t> count_pending_escalations(Database& db, std::int64_t after_audit_id) {
  auto count =
      Query::prepare(db, "SELECT count(*) FROM audit WHERE id > ? AND event IN ('escalation', 'escalation_breached')");
  if (!count) return std::unexpected(count.error());
  count->bind(1, after_audit_id);
  auto row = count->step();
  if (!row) return std::unexpected(row.error());
  return count->integer(0);
}

Result<std::vector<OpenClock>> open_clocks(Database& db) {
  auto select = Query::prepare(db,
                               "SELECT id, reason, created_at, breach_noticed_at IS NOT NULL FROM escalations"
                               " WHERE status = 'open' ORDER BY created_at, id");
  if (!select) return std::unexpected(select.error());
  std::vector<OpenClock> out;
  while (true) {
    auto row = select->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    const auto reason = from_sql<EscalationReason>(select->text(1));
    const auto created = parse_time(select->text(2));
    if (!reason || !created)
      return std::unexpected(Error{ErrorKind::corrupt, "escalation " + std::to_string(select->integer(0)) +
                                                           " has an unreadable reason or creation time"});
    out.push_back({select->integer(0), *reason, *created, select->integer(3) != 0});
  }
}

Result<bool> notice_breach(Database& db, std::int64_t id, Time due_at, Time now) {
  return transaction<bool>(db, [&]() -> Result<bool> {
    auto update = Query::prepare(db,
                                 "UPDATE escalations SET breach_noticed_at = ?1 WHERE id = ?2 AND status = 'open'"
                                 " AND breach_noticed_at IS NULL RETURNING message_id, reason");
    if (!update) return std::unexpected(update.error());
    update->bind(1, format_time(now)).bind(2, id);
    auto row = update->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return false;
    const std::int64_t message_id = update->integer(0);
    const std::string reason = update->text(1);
    // One row at most (by key): the next step finishes the statement.
    if (auto done = update->step(); !done) return std::unexpected(done.error());
    const std::string detail = JsonOut()
                                   .begin_object()
                                   .field("escalation", id)
                                   .field("reason", reason)
                                   .field("due_at", format_time(due_at))
                                   .end_object()
                                   .str();
    DISPATCHD_TRY(
        append_audit(db, {format_time(now), AuditKind::escalation_breached, message_id, "dispatchd", detail}));
    return true;
  });
}

}  // namespace dispatchd::store
