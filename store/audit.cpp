#include "store/audit.h"

#include "store/internal/sql.h"
#include "store/migrations.h"

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
  const std::string hash = sha256_hex(prev + canonical(id, event));
  auto insert = Query::prepare(
      db, "INSERT INTO audit(id, at, event, message_id, actor, detail, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?)");
  if (!insert) return std::unexpected(insert.error());
  insert->bind(1, id).bind(2, event.at).bind(3, event.event).bind(4, event.message_id).bind(5, event.actor);
  insert->bind(6, event.detail).bind(7, prev).bind(8, hash);
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

// Walks `rows` (id, at, event, message_id, actor, detail, prev_hash, hash in id order),
// starting from the hash `expected_prev`; stops at the first bad row.
Result<AuditCheck> check_rows(Query& rows, std::string expected_prev) {
  AuditCheck check;
  while (true) {
    auto row = rows.step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    ++check.events;
    const std::int64_t id = rows.integer(0);
    const AuditEvent event{rows.text(1), rows.text(2), rows.optional_integer(3), rows.text(4), rows.text(5)};
    const std::string prev = rows.text(6);
    const std::string stored = rows.text(7);
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
  return check;
}

}  // namespace

Result<AuditCheck> verify_audit(Database& db) {
  auto rows =
      Query::prepare(db, "SELECT id, at, event, message_id, actor, detail, prev_hash, hash FROM audit ORDER BY id");
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
  auto rows = Query::prepare(db,
                             "SELECT id, at, event, message_id, actor, detail, prev_hash, hash FROM audit"
                             " WHERE id >= ? AND id <= ? ORDER BY id");
  if (!rows) return std::unexpected(rows.error());
  rows->bind(1, from).bind(2, to);
  return check_rows(*rows, std::move(expected_prev));
}

}  // namespace dispatchd::store
