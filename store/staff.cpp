#include "store/staff.h"

#include "common/json_out.h"
#include "store/audit.h"
#include "store/internal/sql.h"

namespace dispatchd::store {
namespace {

Result<void> audit_account(Database& db, AuditKind event, const std::string& name, const std::string& actor, Time now,
                           std::optional<bool> admin = std::nullopt) {
  JsonOut out;
  out.begin_object().field("account", name);
  if (admin) out.field("admin", *admin);
  const auto detail = out.end_object().str();
  auto appended = append_audit(db, {format_time(now), event, std::nullopt, actor, detail});
  if (!appended) return std::unexpected(appended.error());
  return {};
}

Result<Time> time_column(const Query& query, int column, std::string_view what) {
  const auto text = query.text(column);
  const auto time = parse_time(text);
  if (!time) return std::unexpected(Error{ErrorKind::corrupt, std::string(what) + " is not a time: " + text});
  return *time;
}

Result<std::optional<std::string>> optional_text_of(Database& db, std::string_view sql, const std::string& key) {
  auto select = Query::prepare(db, sql);
  if (!select) return std::unexpected(select.error());
  select->bind(1, key);
  auto row = select->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(select->text(0));
}

}  // namespace

Result<void> add_staff(Database& db, const std::string& name, const std::string& token_hash, const std::string& actor,
                       Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    auto upsert = Query::prepare(
        db,
        "INSERT INTO staff_accounts(name, token_hash, created_at) VALUES (?1, ?2, ?3)"
        " ON CONFLICT (name) DO UPDATE SET token_hash = ?2, created_at = ?3, revoked_at = NULL, admin = 0"
        // Qualified: PostgreSQL also sees EXCLUDED.revoked_at here.
        " WHERE staff_accounts.revoked_at IS NOT NULL");
    if (!upsert) return std::unexpected(upsert.error());
    upsert->bind(1, name).bind(2, token_hash).bind(3, format_time(now));
    DISPATCHD_TRY(upsert->run());
    if (upsert->changes() == 0) return std::unexpected(Error::refused("staff account " + name + " already exists"));
    return audit_account(db, AuditKind::staff_account_added, name, actor, now);
  });
}

Result<void> revoke_staff(Database& db, const std::string& name, const std::string& actor, Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    auto revoke = Query::prepare(db, "UPDATE staff_accounts SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL");
    if (!revoke) return std::unexpected(revoke.error());
    revoke->bind(1, format_time(now)).bind(2, name);
    DISPATCHD_TRY(revoke->run());
    if (revoke->changes() == 0) return std::unexpected(Error::not_found("no active staff account " + name));
    auto sessions = Query::prepare(db, "DELETE FROM staff_sessions WHERE name = ?");
    if (!sessions) return std::unexpected(sessions.error());
    sessions->bind(1, name);
    DISPATCHD_TRY(sessions->run());
    return audit_account(db, AuditKind::staff_account_revoked, name, actor, now);
  });
}

Result<void> set_staff_admin(Database& db, const std::string& name, bool admin, const std::string& actor, Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    auto update = Query::prepare(db, "UPDATE staff_accounts SET admin = ? WHERE name = ? AND revoked_at IS NULL");
    if (!update) return std::unexpected(update.error());
    update->bind(1, admin ? 1 : 0).bind(2, name);
    DISPATCHD_TRY(update->run());
    if (update->changes() == 0) return std::unexpected(Error::not_found("no active staff account " + name));
    return audit_account(db, AuditKind::staff_account_admin, name, actor, now, admin);
  });
}

Result<bool> staff_admin(Database& db, const std::string& name) {
  auto select = Query::prepare(db, "SELECT admin FROM staff_accounts WHERE name = ? AND revoked_at IS NULL");
  if (!select) return std::unexpected(select.error());
  select->bind(1, name);
  auto row = select->step();
  if (!row) return std::unexpected(row.error());
  return *row && select->integer(0) != 0;
}

Result<std::vector<StaffAccount>> list_staff(Database& db) {
  auto select = Query::prepare(db, "SELECT name, created_at, revoked_at, sessions, admin FROM v_staff ORDER BY name");
  if (!select) return std::unexpected(select.error());
  std::vector<StaffAccount> out;
  while (true) {
    auto row = select->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    out.push_back(
        {select->text(0), select->text(1), select->optional_text(2), select->integer(3), select->integer(4) != 0});
  }
}

Result<std::optional<std::string>> staff_token_hash(Database& db, const std::string& name) {
  return optional_text_of(db, "SELECT token_hash FROM staff_accounts WHERE name = ? AND revoked_at IS NULL", name);
}

Result<std::optional<std::string>> staff_with_token(Database& db, const std::string& token_hash) {
  return optional_text_of(db, "SELECT name FROM staff_accounts WHERE token_hash = ? AND revoked_at IS NULL",
                          token_hash);
}

Result<void> open_session(Database& db, const std::string& id_hash, const std::string& name, const std::string& csrf,
                          Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    auto insert =
        Query::prepare(db,
                       "INSERT INTO staff_sessions(id_hash, name, csrf, created_at, last_seen_at)"
                       " SELECT ?1, name, ?3, ?4, ?4 FROM staff_accounts WHERE name = ?2 AND revoked_at IS NULL");
    if (!insert) return std::unexpected(insert.error());
    insert->bind(1, id_hash).bind(2, name).bind(3, csrf).bind(4, format_time(now));
    DISPATCHD_TRY(insert->run());
    if (insert->changes() == 0) return std::unexpected(Error::not_found("no active staff account " + name));
    return audit_account(db, AuditKind::staff_login, name, name, now);
  });
}

Result<std::optional<StaffSession>> find_session(Database& db, const std::string& id_hash) {
  auto select =
      Query::prepare(db,
                     "SELECT s.name, s.csrf, s.created_at, s.last_seen_at FROM staff_sessions s"
                     " JOIN staff_accounts a ON a.name = s.name AND a.revoked_at IS NULL WHERE s.id_hash = ?");
  if (!select) return std::unexpected(select.error());
  select->bind(1, id_hash);
  auto row = select->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<StaffSession>();
  auto created = time_column(*select, 2, "staff_sessions.created_at");
  if (!created) return std::unexpected(created.error());
  auto seen = time_column(*select, 3, "staff_sessions.last_seen_at");
  if (!seen) return std::unexpected(seen.error());
  return std::optional<StaffSession>(StaffSession{select->text(0), select->text(1), *created, *seen});
}

Result<void> touch_session(Database& db, const std::string& id_hash, Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    auto update = Query::prepare(db, "UPDATE staff_sessions SET last_seen_at = ? WHERE id_hash = ?");
    if (!update) return std::unexpected(update.error());
    update->bind(1, format_time(now)).bind(2, id_hash);
    return update->run();
  });
}

Result<void> close_session(Database& db, const std::string& id_hash, Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    auto name = optional_text_of(db, "SELECT name FROM staff_sessions WHERE id_hash = ?", id_hash);
    if (!name) return std::unexpected(name.error());
    if (!*name) return {};
    auto remove = Query::prepare(db, "DELETE FROM staff_sessions WHERE id_hash = ?");
    if (!remove) return std::unexpected(remove.error());
    remove->bind(1, id_hash);
    DISPATCHD_TRY(remove->run());
    return audit_account(db, AuditKind::staff_logout, **name, **name, now);
  });
}

Result<std::int64_t> delete_sessions(Database& db, Time created_before, Time seen_before) {
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    auto remove = Query::prepare(db, "DELETE FROM staff_sessions WHERE created_at < ? OR last_seen_at < ?");
    if (!remove) return std::unexpected(remove.error());
    remove->bind(1, format_time(created_before)).bind(2, format_time(seen_before));
    DISPATCHD_TRY(remove->run());
    return static_cast<std::int64_t>(remove->changes());
  });
}

}  // namespace dispatchd::store
