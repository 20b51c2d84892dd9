#include "store/audit.h"

#include <sqlite3.h>

#include "store/migrations.h"
#include "store/sql.h"

namespace dispatchd::store {
namespace {

// Length-prefixed fields, so that no two different events share a canonical form.
std::string canonical(std::int64_t id, const AuditEvent& e) {
  std::string out;
  const auto field = [&](const std::string& value) { out += std::to_string(value.size()) + ":" + value + ";"; };
  field(std::to_string(id));
  field(e.at);
  field(e.event);
  field(e.message_id ? std::to_string(*e.message_id) : "");
  field(e.actor);
  field(e.detail);
  return out;
}

}  // namespace

std::expected<std::string, std::string> append_audit(Database& db, const AuditEvent& event) {
  Statement last;
  if (sqlite3_prepare_v2(db.handle(), "SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1", -1, &last.stmt, nullptr) != SQLITE_OK) {
    return std::unexpected(std::string(sqlite3_errmsg(db.handle())));
  }
  std::int64_t id = 1;
  std::string prev = k_audit_genesis;
  if (sqlite3_step(last.stmt) == SQLITE_ROW) {
    id = sqlite3_column_int64(last.stmt, 0) + 1;
    prev = column_text(last.stmt, 1);
  }
  const std::string hash = sha256_hex(prev + canonical(id, event));
  Statement insert;
  sqlite3_prepare_v2(db.handle(),
                     "INSERT INTO audit(id, at, event, message_id, actor, detail, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?)",
                     -1, &insert.stmt, nullptr);
  sqlite3_bind_int64(insert.stmt, 1, id);
  sqlite3_bind_text(insert.stmt, 2, event.at.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(insert.stmt, 3, event.event.c_str(), -1, SQLITE_TRANSIENT);
  if (event.message_id) sqlite3_bind_int64(insert.stmt, 4, *event.message_id);
  else sqlite3_bind_null(insert.stmt, 4);
  sqlite3_bind_text(insert.stmt, 5, event.actor.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(insert.stmt, 6, event.detail.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(insert.stmt, 7, prev.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(insert.stmt, 8, hash.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(insert.stmt) != SQLITE_DONE) return std::unexpected(std::string(sqlite3_errmsg(db.handle())));
  return hash;
}

std::expected<AuditCheck, std::string> verify_audit(Database& db) {
  Statement rows;
  if (sqlite3_prepare_v2(db.handle(), "SELECT id, at, event, message_id, actor, detail, prev_hash, hash FROM audit ORDER BY id",
                         -1, &rows.stmt, nullptr) != SQLITE_OK) {
    return std::unexpected(std::string(sqlite3_errmsg(db.handle())));
  }
  AuditCheck check;
  std::string expected_prev = k_audit_genesis;
  int rc;
  while ((rc = sqlite3_step(rows.stmt)) == SQLITE_ROW) {
    ++check.events;
    const std::int64_t id = sqlite3_column_int64(rows.stmt, 0);
    AuditEvent event{column_text(rows.stmt, 1), column_text(rows.stmt, 2), std::nullopt, column_text(rows.stmt, 4),
                     column_text(rows.stmt, 5)};
    if (sqlite3_column_type(rows.stmt, 3) != SQLITE_NULL) event.message_id = sqlite3_column_int64(rows.stmt, 3);
    const std::string prev = column_text(rows.stmt, 6);
    const std::string stored = column_text(rows.stmt, 7);
    if (prev != expected_prev) {
      check.first_broken = id;
      check.reason = "its prev_hash is not the hash of the row before it: a row before it was deleted or changed";
      return check;
    }
    if (sha256_hex(prev + canonical(id, event)) != stored) {
      check.first_broken = id;
      check.reason = "its contents do not match its hash: the row was changed";
      return check;
    }
    expected_prev = stored;
  }
  if (rc != SQLITE_DONE) return std::unexpected(std::string(sqlite3_errmsg(db.handle())));
  return check;
}

}  // namespace dispatchd::store
