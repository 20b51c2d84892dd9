#include "store/saved_replies.h"

#include "common/json_out.h"
#include "store/audit.h"
#include "store/internal/sql.h"
#include "store/internal/view_rows.h"
#include "store/transaction.h"

namespace dispatchd::store {
namespace {

constexpr std::string_view k_columns = "SELECT id, name, text, created_by, created_at, updated_at FROM saved_replies";

SavedReply row_of(const Query& q) {
  return SavedReply{q.integer(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5)};
}

Result<void> audit_reply(Database& db, AuditKind event, std::int64_t id, const std::string& name,
                         const std::optional<std::string>& text, const std::string& actor, Time now) {
  JsonOut out;
  out.begin_object().field("saved_reply", id).field("name", name);
  if (text) out.field("text", *text);
  const auto detail = out.end_object().str();
  auto appended = append_audit(db, {format_time(now), event, std::nullopt, actor, detail});
  if (!appended) return std::unexpected(appended.error());
  return {};
}

Error no_reply(std::int64_t id) { return Error::not_found("no saved reply " + std::to_string(id)); }

}  // namespace

Result<std::int64_t> add_saved_reply(Database& db, const std::string& name, const std::string& text,
                                     const std::string& actor, Time now) {
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    auto taken = Query::prepare(db, "SELECT id FROM saved_replies WHERE name = ? AND removed_at IS NULL");
    if (!taken) return std::unexpected(taken.error());
    taken->bind(1, name);
    auto row = taken->step();
    if (!row) return std::unexpected(row.error());
    if (*row) return std::unexpected(Error::refused("a saved reply is already named " + name));
    auto insert = Query::prepare(db,
                                 "INSERT INTO saved_replies(name, text, created_by, created_at, updated_at)"
                                 " VALUES (?1, ?2, ?3, ?4, ?4) RETURNING id");
    if (!insert) return std::unexpected(insert.error());
    insert->bind(1, name).bind(2, text).bind(3, actor).bind(4, format_time(now));
    auto id = insert->inserted_id();
    if (!id) return std::unexpected(id.error());
    DISPATCHD_TRY(audit_reply(db, AuditKind::saved_reply_added, *id, name, text, actor, now));
    return *id;
  });
}

Result<void> change_saved_reply(Database& db, std::int64_t id, const std::string& text, const std::string& actor,
                                Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    auto update = Query::prepare(
        db, "UPDATE saved_replies SET text = ?, updated_at = ? WHERE id = ? AND removed_at IS NULL RETURNING name");
    if (!update) return std::unexpected(update.error());
    update->bind(1, text).bind(2, format_time(now)).bind(3, id);
    auto row = update->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return std::unexpected(no_reply(id));
    const std::string name = update->text(0);
    DISPATCHD_TRY(update->run());  // to the end, as run() finishes a statement
    return audit_reply(db, AuditKind::saved_reply_changed, id, name, text, actor, now);
  });
}

Result<void> remove_saved_reply(Database& db, std::int64_t id, const std::string& actor, Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    auto update = Query::prepare(
        db, "UPDATE saved_replies SET removed_at = ? WHERE id = ? AND removed_at IS NULL RETURNING name");
    if (!update) return std::unexpected(update.error());
    update->bind(1, format_time(now)).bind(2, id);
    auto row = update->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return std::unexpected(no_reply(id));
    const std::string name = update->text(0);
    DISPATCHD_TRY(update->run());  // to the end, as run() finishes a statement
    return audit_reply(db, AuditKind::saved_reply_removed, id, name, std::nullopt, actor, now);
  });
}

Result<SavedReply> find_saved_reply(Database& db, std::int64_t id) {
  auto select = Query::prepare(db, std::string(k_columns) + " WHERE id = ? AND removed_at IS NULL");
  if (!select) return std::unexpected(select.error());
  select->bind(1, id);
  auto row = select->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::unexpected(no_reply(id));
  return row_of(*select);
}

Result<std::vector<SavedReply>> list_saved_replies(Database& db) {
  auto select = Query::prepare(db, std::string(k_columns) + " WHERE removed_at IS NULL ORDER BY name, id");
  if (!select) return std::unexpected(select.error());
  return collect<SavedReply>(*select, row_of);
}

}  // namespace dispatchd::store
