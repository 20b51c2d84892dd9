#include "store/audit_digest.h"

#include <array>
#include <vector>

#include <openssl/rand.h>

#include "common/json_out.h"
#include "common/text.h"
#include "store/internal/sql.h"
#include "store/migrations.h"

namespace dispatchd::store {
namespace {

// Length-prefixed fields, so that no two different events share a canonical form.
class Canonical {
 public:
  Canonical& field(std::string_view value) {
    m_out += std::to_string(value.size()) + ":";
    m_out += value;
    m_out += ";";
    return *this;
  }
  // The fields every form shares, in their order.
  Canonical& head(std::int64_t id, const AuditRecord& e) {
    field(std::to_string(id)).field(e.at).field(e.event);
    return field(e.message_id ? std::to_string(*e.message_id) : "").field(e.actor);
  }
  const std::string& str() const { return m_out; }

 private:
  std::string m_out;
};

// The first field of the digested form: a legacy row's first field is its id, a number.
constexpr std::string_view k_digested_form = "v2";

}  // namespace

Result<std::string> new_audit_salt() {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
    return std::unexpected(Error::internal("no randomness for an audit salt (RAND_bytes failed)"));
  return text::hex(bytes);
}

std::string detail_digest(std::string_view salt, std::string_view detail) {
  std::string bytes(salt);
  bytes += detail;
  return sha256_hex(bytes);
}

std::string digested_row_hash(std::string_view prev_hash, std::int64_t id, const AuditRecord& event,
                              std::string_view digest) {
  return sha256_hex(std::string(prev_hash) + Canonical().field(k_digested_form).head(id, event).field(digest).str());
}

std::string legacy_row_hash(std::string_view prev_hash, std::int64_t id, const AuditRecord& event) {
  return sha256_hex(std::string(prev_hash) + Canonical().head(id, event).field(event.detail).str());
}

std::optional<std::string> audit_row_problem(const ChainRow& row) {
  if (!row.detail_digest) {
    if (row.salt) return "it has a salt but no digest: the row was changed";
    if (legacy_row_hash(row.prev_hash, row.id, row.event) != row.hash)
      return "its contents do not match its hash: the row was changed";
    return std::nullopt;
  }
  if (row.salt && detail_digest(*row.salt, row.event.detail) != *row.detail_digest)
    return "its contents do not match its hash: its detail does not match its digest, the row was changed";
  if (!row.salt && row.event.detail != k_erased_detail)
    return "it has no salt (erased) but its detail is not the erasure tombstone: the row was changed";
  if (digested_row_hash(row.prev_hash, row.id, row.event, *row.detail_digest) != row.hash)
    return "its contents do not match its hash: the row was changed";
  return std::nullopt;
}

namespace {

constexpr int k_rechain_batch = 1000;

Result<std::vector<ChainRow>> legacy_batch(Database& db, std::int64_t after) {
  auto rows = Query::prepare(db,
                             "SELECT id, at, event, message_id, actor, detail, prev_hash FROM audit WHERE id > ?"
                             " ORDER BY id LIMIT ?");
  if (!rows) return std::unexpected(rows.error());
  rows->bind(1, after).bind(2, k_rechain_batch);
  std::vector<ChainRow> out;
  while (true) {
    auto row = rows->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    ChainRow r;
    r.id = rows->integer(0);
    r.event = {rows->text(1), rows->text(2), rows->optional_integer(3), rows->text(4), rows->text(5)};
    r.prev_hash = rows->text(6);
    out.push_back(std::move(r));
  }
}

// Gives every row a salt, a digest and the hash of the new formula, in id order, in
// batches (rows are read before they are changed: no statement reads a table it writes).
Result<void> rehash_rows(Database& db) {
  std::int64_t after = 0;
  std::optional<std::string> prev;  // the new hash of the row before; none for the first row
  while (true) {
    auto batch = legacy_batch(db, after);
    if (!batch) return std::unexpected(batch.error());
    if (batch->empty()) return {};
    for (ChainRow& row : *batch) {
      auto salt = new_audit_salt();
      if (!salt) return std::unexpected(salt.error());
      if (prev) row.prev_hash = *prev;
      const std::string digest = detail_digest(*salt, row.event.detail);
      const std::string hash = digested_row_hash(row.prev_hash, row.id, row.event, digest);
      auto update =
          Query::prepare(db, "UPDATE audit SET salt = ?, detail_digest = ?, prev_hash = ?, hash = ? WHERE id = ?");
      if (!update) return std::unexpected(update.error());
      update->bind(1, *salt).bind(2, digest).bind(3, row.prev_hash).bind(4, hash).bind(5, row.id);
      DISPATCHD_TRY(update->run());
      prev = hash;
      after = row.id;
    }
  }
}

}  // namespace

Result<void> rechain_audit(Database& db, const std::string& now) {
  auto rows = internal::query_int(db, "SELECT count(*) FROM audit");
  if (!rows) return std::unexpected(rows.error());
  if (*rows == 0) return {};
  auto before = verify_audit(db);
  if (!before) return std::unexpected(before.error());
  if (before->first_broken) {
    return std::unexpected(Error::refused(
        "the audit chain is broken at audit id " + std::to_string(*before->first_broken) + " (" + before->reason +
        "): it is not re-hashed with the salted formula, which would hide the break; restore a backup whose "
        "chain verifies (dispatchctl audit verify)"));
  }
  auto head = Query::prepare(db, "SELECT hash FROM audit ORDER BY id DESC LIMIT 1");
  if (!head) return std::unexpected(head.error());
  DISPATCHD_TRY(head->step());
  const std::string old_head = head->text(0);
  DISPATCHD_TRY(rehash_rows(db));
  internal::Access::audit_tail(db).reset();  // every hash changed
  const std::string detail = JsonOut()
                                 .begin_object()
                                 .field("old_head", old_head)
                                 .field("old_rows", before->events)
                                 .field("formula", "sha256(prev_hash || canonical(..., sha256(salt || detail)))")
                                 .end_object()
                                 .str();
  DISPATCHD_TRY(append_audit(db, {now, AuditKind::chain_migrated, std::nullopt, "dispatchd", detail}));
  auto after = verify_audit(db);
  if (!after) return std::unexpected(after.error());
  if (after->first_broken) {
    return std::unexpected(Error::internal("the re-hashed audit chain does not verify at audit id " +
                                           std::to_string(*after->first_broken) + ": " + after->reason));
  }
  return {};
}

}  // namespace dispatchd::store
