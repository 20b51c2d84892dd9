#include "store/queue.h"

#include <sqlite3.h>

#include "store/audit.h"
#include "store/sql.h"

namespace dispatchd::store {
namespace {

struct Item {
  std::string status;
  std::string assignee;
};

std::expected<Item, std::string> load(Database& db, std::int64_t id) {
  Statement select;
  sqlite3_prepare_v2(db.handle(), "SELECT status, coalesce(assignee, '') FROM escalations WHERE id = ?", -1,
                     &select.stmt, nullptr);
  sqlite3_bind_int64(select.stmt, 1, id);
  if (sqlite3_step(select.stmt) != SQLITE_ROW) return std::unexpected("no escalation " + std::to_string(id));
  return Item{column_text(select.stmt, 0), column_text(select.stmt, 1)};
}

// Whether `who` may act on the item: it is still open, and not held by someone else.
std::expected<void, std::string> check_actionable(const Item& item, std::int64_t id, const std::string& who) {
  if (item.status == "resolved" || item.status == "dismissed") {
    return std::unexpected("escalation " + std::to_string(id) + " is already " + item.status);
  }
  if (item.status == "claimed" && item.assignee != who) {
    return std::unexpected("escalation " + std::to_string(id) + " is claimed by " + item.assignee);
  }
  return {};
}

std::expected<void, std::string> audit(Database& db, const std::string& event, std::int64_t id, const std::string& who,
                                       const std::string& detail, Time now) {
  // The audit row names the message; the escalation id goes in the detail.
  Statement select;
  sqlite3_prepare_v2(db.handle(), "SELECT message_id FROM escalations WHERE id = ?", -1, &select.stmt, nullptr);
  sqlite3_bind_int64(select.stmt, 1, id);
  if (sqlite3_step(select.stmt) != SQLITE_ROW) return std::unexpected(std::string(sqlite3_errmsg(db.handle())));
  auto ok = append_audit(db, {format_time(now), event, sqlite3_column_int64(select.stmt, 0), who,
                              "{\"escalation\":" + std::to_string(id) + detail + "}"});
  if (!ok) return std::unexpected(ok.error());
  return {};
}

}  // namespace

std::expected<std::int64_t, std::string> open_escalation(Database& db, const NewEscalation& e, Time now) {
  return transaction<std::int64_t>(db, [&]() -> std::expected<std::int64_t, std::string> {
    Statement insert;
    sqlite3_prepare_v2(db.handle(),
                       "INSERT INTO escalations(message_id, reason, detail, proposed_action, created_at) VALUES (?,?,?,?,?)",
                       -1, &insert.stmt, nullptr);
    sqlite3_bind_int64(insert.stmt, 1, e.message_id);
    bind(insert.stmt, 2, e.reason);
    bind(insert.stmt, 3, e.detail);
    if (e.proposed_action) bind(insert.stmt, 4, *e.proposed_action);
    else sqlite3_bind_null(insert.stmt, 4);
    bind(insert.stmt, 5, format_time(now));
    if (sqlite3_step(insert.stmt) != SQLITE_DONE) return std::unexpected(std::string(sqlite3_errmsg(db.handle())));
    const std::int64_t id = sqlite3_last_insert_rowid(db.handle());
    if (auto ok = audit(db, "escalation", id, "dispatchd", ",\"reason\":\"" + e.reason + "\"", now); !ok) {
      return std::unexpected(ok.error());
    }
    return id;
  });
}

std::expected<void, std::string> claim_escalation(Database& db, std::int64_t id, const std::string& who, Time now) {
  return transaction<void>(db, [&]() -> std::expected<void, std::string> {
    auto item = load(db, id);
    if (!item) return std::unexpected(item.error());
    if (auto ok = check_actionable(*item, id, who); !ok) return ok;
    Statement update;
    sqlite3_prepare_v2(db.handle(), "UPDATE escalations SET status = 'claimed', assignee = ?, claimed_at = ? WHERE id = ?",
                       -1, &update.stmt, nullptr);
    bind(update.stmt, 1, who);
    bind(update.stmt, 2, format_time(now));
    sqlite3_bind_int64(update.stmt, 3, id);
    if (sqlite3_step(update.stmt) != SQLITE_DONE) return std::unexpected(std::string(sqlite3_errmsg(db.handle())));
    return audit(db, "staff_claim", id, who, "", now);
  });
}

std::expected<void, std::string> close_escalation(Database& db, std::int64_t id, const std::string& who,
                                                  const std::string& status, const std::string& resolution, Time now) {
  if (status != "resolved" && status != "dismissed") return std::unexpected("an escalation closes as resolved or dismissed");
  return transaction<void>(db, [&]() -> std::expected<void, std::string> {
    auto item = load(db, id);
    if (!item) return std::unexpected(item.error());
    if (auto ok = check_actionable(*item, id, who); !ok) return ok;
    Statement update;
    sqlite3_prepare_v2(db.handle(),
                       "UPDATE escalations SET status = ?, assignee = ?, resolution = ?, resolved_at = ? WHERE id = ?", -1,
                       &update.stmt, nullptr);
    bind(update.stmt, 1, status);
    bind(update.stmt, 2, who);
    bind(update.stmt, 3, resolution);
    bind(update.stmt, 4, format_time(now));
    sqlite3_bind_int64(update.stmt, 5, id);
    if (sqlite3_step(update.stmt) != SQLITE_DONE) return std::unexpected(std::string(sqlite3_errmsg(db.handle())));
    return audit(db, "staff_" + status, id, who, "", now);
  });
}

}  // namespace dispatchd::store
