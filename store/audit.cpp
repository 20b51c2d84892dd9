#include "store/audit.h"

#include "store/audit_digest.h"
#include "store/internal/sql.h"
#include "store/migrations.h"

namespace dispatchd::store {
Result<std::string> append_audit(Database& db, const AuditEvent& event) {
  std::int64_t id = 1;
  std::string prev = k_audit_genesis;
  auto& tail = db.audit_tail();
  // The chain's tail as our last append left it, when nothing can have moved it since: the
  // same transaction (we hold the write lock) and no rollback in between.
  if (tail && db.in_transaction() && tail->epoch == db.transaction_epoch()) {
    id = tail->id + 1;
    prev = tail->hash;
  } else {
    auto last = Query::prepare(db, "SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1");
    if (!last) return std::unexpected(last.error());
    auto row = last->step();
    if (!row) return std::unexpected(row.error());
    if (*row) {
      id = last->integer(0) + 1;
      prev = last->text(1);
    }
  }
  auto salt = new_audit_salt();
  if (!salt) return std::unexpected(salt.error());
  const std::string digest = detail_digest(*salt, event.detail);
  const std::string hash = digested_row_hash(prev, id, event, digest);
  auto insert = Query::prepare(db,
                               "INSERT INTO audit(id, at, event, message_id, actor, detail, prev_hash, hash, salt,"
                               " detail_digest) VALUES (?,?,?,?,?,?,?,?,?,?)");
  if (!insert) return std::unexpected(insert.error());
  insert->bind(1, id).bind(2, event.at).bind(3, event.event).bind(4, event.message_id).bind(5, event.actor);
  insert->bind(6, event.detail).bind(7, prev).bind(8, hash).bind(9, *salt).bind(10, digest);
  DISPATCHD_TRY(insert->run());
  tail = Database::AuditTail{db.transaction_epoch(), id, hash};
  return hash;
}

Result<void> record_event(Database& db, const AuditEvent& event) {
  return transaction<void>(db, [&]() -> Result<void> {
    DISPATCHD_TRY(append_audit(db, event));
    return {};
  });
}

namespace {

// "SELECT <the columns check_rows reads, in its order> FROM audit": a file the salted
// digest's migration (0013) has not reached reads as legacy rows.
Result<std::string> select_audit(Database& db) {
  auto digested = db.query_int("SELECT count(*) FROM pragma_table_info('audit') WHERE name = 'detail_digest'");
  if (!digested) return std::unexpected(digested.error());
  return std::string("SELECT id, at, event, message_id, actor, detail, prev_hash, hash, ") +
         (*digested ? "salt, detail_digest" : "NULL, NULL") + " FROM audit";
}

// Walks `rows` (select_audit's columns in id order), starting from the hash
// `expected_prev`; stops at the first bad row.
Result<AuditCheck> check_rows(Query& rows, std::string expected_prev) {
  AuditCheck check;
  while (true) {
    auto stepped = rows.step();
    if (!stepped) return std::unexpected(stepped.error());
    if (!*stepped) break;
    ++check.events;
    const ChainRow row{
        rows.integer(0),       {rows.text(1), rows.text(2), rows.optional_integer(3), rows.text(4), rows.text(5)},
        rows.optional_text(8), rows.optional_text(9),
        rows.text(6),          rows.text(7)};
    if (row.prev_hash != expected_prev) {
      check.first_broken = row.id;
      check.reason = "its prev_hash is not the hash of the row before it: a row before it was deleted or changed";
      return check;
    }
    if (auto problem = audit_row_problem(row)) {
      check.first_broken = row.id;
      check.reason = std::move(*problem);
      return check;
    }
    expected_prev = row.hash;
  }
  return check;
}

}  // namespace

Result<AuditCheck> verify_audit(Database& db) {
  auto select = select_audit(db);
  if (!select) return std::unexpected(select.error());
  auto rows = Query::prepare(db, *select + " ORDER BY id");
  if (!rows) return std::unexpected(rows.error());
  return check_rows(*rows, k_audit_genesis);
}

Result<AuditCheck> verify_audit_range(Database& db, std::int64_t from, std::int64_t to) {
  std::string expected_prev = k_audit_genesis;
  {
    auto before = Query::prepare(db, "SELECT hash FROM audit WHERE id < ? ORDER BY id DESC LIMIT 1");
    if (!before) return std::unexpected(before.error());
    before->bind(1, from);
    auto row = before->step();
    if (!row) return std::unexpected(row.error());
    if (*row) expected_prev = before->text(0);
  }
  auto select = select_audit(db);
  if (!select) return std::unexpected(select.error());
  auto rows = Query::prepare(db, *select + " WHERE id >= ? AND id <= ? ORDER BY id");
  if (!rows) return std::unexpected(rows.error());
  rows->bind(1, from).bind(2, to);
  return check_rows(*rows, std::move(expected_prev));
}

}  // namespace dispatchd::store
