#include "store/queue.h"

#include "store/audit.h"
#include "store/json.h"
#include "store/sql.h"

namespace dispatchd::store {
namespace {

struct Item {
  std::int64_t message_id = 0;
  std::string status;
  std::string assignee;
};

std::expected<Item, std::string> load(Database& db, std::int64_t id) {
  auto select = Query::prepare(db, "SELECT message_id, status, coalesce(assignee, '') FROM escalations WHERE id = ?");
  if (!select) return std::unexpected(select.error());
  select->bind(1, id);
  auto row = select->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::unexpected("no escalation " + std::to_string(id));
  return Item{select->integer(0), select->text(1), select->text(2)};
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

}  // namespace

std::expected<std::int64_t, std::string> open_escalation(Database& db, const NewEscalation& e, Time now) {
  return transaction<std::int64_t>(db, [&]() -> std::expected<std::int64_t, std::string> {
    auto insert = Query::prepare(
        db, "INSERT INTO escalations(message_id, reason, detail, proposed_action, created_at) VALUES (?,?,?,?,?)");
    if (!insert) return std::unexpected(insert.error());
    insert->bind(1, e.message_id).bind(2, e.reason).bind(3, e.detail).bind(4, e.proposed_action);
    insert->bind(5, format_time(now));
    DISPATCHD_TRY(insert->run());
    const std::int64_t id = insert->last_insert_id();
    // The audit row names the message; the escalation id goes in the detail.
    DISPATCHD_TRY(append_audit(db, {format_time(now), "escalation", e.message_id, "dispatchd",
                                    JsonObject().add("escalation", id).add("reason", e.reason).str()}));
    return id;
  });
}

std::expected<void, std::string> claim_escalation(Database& db, std::int64_t id, const std::string& who, Time now) {
  return transaction<void>(db, [&]() -> std::expected<void, std::string> {
    auto item = load(db, id);
    if (!item) return std::unexpected(item.error());
    DISPATCHD_TRY(check_actionable(*item, id, who));
    auto update =
        Query::prepare(db, "UPDATE escalations SET status = 'claimed', assignee = ?, claimed_at = ? WHERE id = ?");
    if (!update) return std::unexpected(update.error());
    update->bind(1, who).bind(2, format_time(now)).bind(3, id);
    DISPATCHD_TRY(update->run());
    const auto detail = JsonObject().add("escalation", id).str();
    DISPATCHD_TRY(append_audit(db, {format_time(now), "staff_claim", item->message_id, who, detail}));
    return {};
  });
}

std::expected<void, std::string> close_escalation(Database& db, std::int64_t id, const std::string& who,
                                                  const std::string& status, const std::string& resolution, Time now) {
  if (status != "resolved" && status != "dismissed")
    return std::unexpected("an escalation closes as resolved or dismissed");
  return transaction<void>(db, [&]() -> std::expected<void, std::string> {
    auto item = load(db, id);
    if (!item) return std::unexpected(item.error());
    DISPATCHD_TRY(check_actionable(*item, id, who));
    auto update = Query::prepare(
        db, "UPDATE escalations SET status = ?, assignee = ?, resolution = ?, resolved_at = ? WHERE id = ?");
    if (!update) return std::unexpected(update.error());
    update->bind(1, status).bind(2, who).bind(3, resolution).bind(4, format_time(now)).bind(5, id);
    DISPATCHD_TRY(update->run());
    const auto detail = JsonObject().add("escalation", id).add("resolution", resolution).str();
    DISPATCHD_TRY(append_audit(db, {format_time(now), "staff_" + status, item->message_id, who, detail}));
    return {};
  });
}

}  // namespace dispatchd::store
