#include "store/audit.h"

#include "store/audit_digest.h"
#include "store/internal/audit_append.h"
#include "store/internal/locks.h"
#include "store/internal/sql.h"
#include "store/migrations.h"

namespace dispatchd::store {

Result<std::optional<AuditAnchor>> audit_anchor(Database& db) {
  // A database older than migration 0012 has no anchor table, and nothing archived.
  auto exists = internal::query_int(
      db, per_backend(db.backend(), [](Backend b) { return sql::table_exists(b, "audit_anchor"); }));
  if (!exists) return std::unexpected(exists.error());
  if (*exists == 0) return std::nullopt;
  auto query = Query::prepare(db, "SELECT last_id, last_hash FROM audit_anchor WHERE id = 1");
  if (!query) return std::unexpected(query.error());
  auto row = query->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::nullopt;
  return AuditAnchor{query->integer(0), query->text(1)};
}

Result<std::optional<AuditAnchor>> newest_audit_event(Database& db) {
  auto q = Query::prepare(db, "SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1");
  if (!q) return std::unexpected(q.error());
  auto row = q->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::nullopt;
  return AuditAnchor{q->integer(0), q->text(1)};
}

Result<std::string> append_audit(Database& db, const AuditEvent& event) {
  return internal::append_audit_record(
      db, {event.at, std::string(to_sql(event.event)), event.message_id, event.actor, event.detail});
}

Result<std::string> internal::append_audit_record(Database& db, const AuditRecord& event) {
  std::int64_t id = 1;
  std::string prev = k_audit_genesis;
  auto& tail = internal::Access::audit_tail(db);
  // The chain's tail as our last append left it, when nothing can have moved it since: the
  // same transaction (we hold the write lock) and no rollback in between.
  if (tail && db.in_transaction() && tail->epoch == internal::Access::transaction_epoch(db)) {
    id = tail->id + 1;
    prev = tail->hash;
  } else {
    // Several instances append to one chain on PostgreSQL: the tail is locked until this
    // transaction ends, so the next appender reads this event as the tail (bench/README.md:
    // the audit chain under concurrent writers). SQLite's writer lock already does this.
    DISPATCHD_TRY(internal::lock_audit_tail(db));
    auto last = Query::prepare(db, "SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1");
    if (!last) return std::unexpected(last.error());
    auto row = last->step();
    if (!row) return std::unexpected(row.error());
    if (*row) {
      id = last->integer(0) + 1;
      prev = last->text(1);
    } else {
      // Everything was archived: the chain goes on from the anchor, and ids are never reused.
      auto anchor = audit_anchor(db);
      if (!anchor) return std::unexpected(anchor.error());
      if (*anchor) {
        id = (*anchor)->last_id + 1;
        prev = (*anchor)->last_hash;
      }
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
  tail = internal::AuditTail{internal::Access::transaction_epoch(db), id, hash};
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
  auto digested = internal::query_int(
      db, per_backend(db.backend(), [](Backend b) { return sql::column_exists(b, "audit", "detail_digest"); }));
  if (!digested) return std::unexpected(digested.error());
  return std::string("SELECT id, at, event, message_id, actor, detail, prev_hash, hash, ") +
         (*digested ? "salt, detail_digest" : "NULL, NULL") + " FROM audit";
}

// Walks `rows` (select_audit's columns in id order), starting from the hash
// `expected_prev` after the id `after_id`; stops at the first bad row.
Result<AuditCheck> check_rows(Query& rows, std::string expected_prev, std::int64_t after_id = 0) {
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
    if (row.id <= after_id) {
      check.first_broken = row.id;
      check.reason = "its id is not after the anchor's: the row belongs to the archived part of the chain";
      return check;
    }
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
  auto anchor = audit_anchor(db);
  if (!anchor) return std::unexpected(anchor.error());
  auto check =
      *anchor ? check_rows(*rows, (*anchor)->last_hash, (*anchor)->last_id) : check_rows(*rows, k_audit_genesis);
  if (check) check->anchor = *anchor;
  return check;
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
  if (expected_prev == k_audit_genesis) {
    // Nothing before `from` here: the segment starts at the anchor when it begins after it.
    auto anchor = audit_anchor(db);
    if (!anchor) return std::unexpected(anchor.error());
    if (*anchor && (*anchor)->last_id < from) expected_prev = (*anchor)->last_hash;
  }
  auto select = select_audit(db);
  if (!select) return std::unexpected(select.error());
  auto rows = Query::prepare(db, *select + " WHERE id >= ? AND id <= ? ORDER BY id");
  if (!rows) return std::unexpected(rows.error());
  rows->bind(1, from).bind(2, to);
  return check_rows(*rows, std::move(expected_prev));
}

Result<ArchiveCheck> verify_audit_archive(Database& live, Database& archive) {
  ArchiveCheck out;
  auto check = verify_audit(archive);
  if (!check) return std::unexpected(check.error());
  out.archive = std::move(*check);
  auto anchor = audit_anchor(live);
  if (!anchor) return std::unexpected(anchor.error());
  const std::string live_start = *anchor ? "the live chain starts after audit id " + std::to_string((*anchor)->last_id)
                                         : "the live chain starts at genesis (nothing archived from it)";
  // The link is the archive's newest event, also when its chain broke before it.
  auto newest = newest_audit_event(archive);
  if (!newest) return std::unexpected(newest.error());
  if (!*newest) {
    out.link = ArchiveLink::empty;
    out.detail = "the archive holds no audit event; " + live_start;
    return out;
  }
  const std::int64_t last = (*newest)->last_id;
  const std::string& last_hash = (*newest)->last_hash;
  const std::string ends = "the archive ends at audit id " + std::to_string(last);
  if (*anchor && (*anchor)->last_id == last && (*anchor)->last_hash == last_hash) {
    out.link = ArchiveLink::linked;
    out.detail = ends + ", the live chain's anchor";
    return out;
  }
  auto same = Query::prepare(live, "SELECT hash FROM audit WHERE id = ?");
  if (!same) return std::unexpected(same.error());
  same->bind(1, last);
  auto row = same->step();
  if (!row) return std::unexpected(row.error());
  if (*row && same->text(0) == last_hash) {
    out.link = ArchiveLink::overlap;
    out.detail = ends +
                 ", which is still live too (an archive run stopped between its commits; the next run "
                 "finishes it)";
    return out;
  }
  out.link = ArchiveLink::unlinked;
  out.detail = ends + " with hash " + last_hash.substr(0, 12) + "..., but " + live_start +
               (*anchor ? " with hash " + (*anchor)->last_hash.substr(0, 12) + "..." : "");
  return out;
}

}  // namespace dispatchd::store
