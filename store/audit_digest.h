#pragma once
// How an audit row commits to its content: the hash formula of the chain (store/audit.h).
//
// Since migration 0013 a row commits to its detail through a salted digest, so that the
// detail can be erased (a customer's data, store/tools/erase.h) while the chain still verifies:
//   salt          16 random bytes, hex; NULL once the row's detail was erased
//   detail_digest sha256_hex(salt || detail)
//   hash          sha256_hex(prev_hash || canonical_v2(id, at, event, message_id, actor, detail_digest))
// A row is checked in one of three ways:
//   digested  salt and digest set: the digest must match the detail, the hash the digest
//   erased    salt NULL, digest set: the detail must be the tombstone k_erased_detail; only
//             the digest is chained (without the salt it cannot be brute-forced back to a
//             phone number)
//   legacy    digest NULL (rows written before 0013, e.g. in archive files):
//             hash = sha256_hex(prev_hash || canonical(id, ..., detail)), the old formula
// The two canonical forms differ in their first field, so no legacy row can pass for a
// digested one or the other way round.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/audit.h"
#include "store/database.h"
#include "store/error.h"

namespace dispatchd::store {

// The detail of an erased row.
inline constexpr std::string_view k_erased_detail = R"({"erased":true})";

struct ChainRow {
  std::int64_t id = 0;
  AuditRecord event;
  std::optional<std::string> salt;
  std::optional<std::string> detail_digest;
  std::string prev_hash;
  std::string hash;
};

// 16 random bytes as 32 hex digits; an `internal` error when the system has no randomness.
[[nodiscard]] Result<std::string> new_audit_salt();

std::string detail_digest(std::string_view salt, std::string_view detail);

// The hash of row `id` holding `event` after `prev_hash`, committing to `digest`.
std::string digested_row_hash(std::string_view prev_hash, std::int64_t id, const AuditRecord& event,
                              std::string_view digest);

// The hash before 0013: committing to the detail itself.
std::string legacy_row_hash(std::string_view prev_hash, std::int64_t id, const AuditRecord& event);

// Why `row` does not match its own hash (its link to the row before is not checked here);
// nullopt when it does.
std::optional<std::string> audit_row_problem(const ChainRow& row);

// Migration 0013's code step: verifies the chain with the old formula (refused, nothing
// changed, when it is broken), gives every legacy row a salt, a digest and a new hash
// (each row keeps its link: the first keeps its prev_hash, the genesis or an archive
// anchor's), verifies the new chain, and appends a "chain_migrated" event whose detail
// names the old chain's head hash and row count. An empty trail is left as it is.
// REQUIRES: inside the migration's transaction.
[[nodiscard]] Result<void> rechain_audit(Database& db, const std::string& now);

}  // namespace dispatchd::store
