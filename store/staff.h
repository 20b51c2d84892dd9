#pragma once
// Staff accounts and their sessions (migrations/0006; the admin mark, 0027). The store keeps only hashes of the
// secrets (staff/accounts.h makes and hashes them); every change to an account and every
// login and logout appends an audit event in the same transaction, with no message id.
//
// Revoking an account keeps its row, so the audit trail's names stay meaningful, and
// deletes its sessions in the same transaction: a revoked person is out at once. A revoked
// name may be added again; it gets a new token, and is not an admin until marked again.
//
// An admin account may reassign a claim to another account (staff/handover.h) and manage
// saved replies (staff/saved_replies.h), as the admin token may; nothing else differs.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"

namespace dispatchd::store {

struct StaffAccount {
  std::string name;
  std::string created_at;
  std::optional<std::string> revoked_at;
  std::int64_t sessions = 0;  // open sessions
  bool admin = false;         // may reassign claims
};

// Adds `name` (or re-activates a revoked one) with `token_hash`; refused when the name is
// active. `actor` is who did it, for the audit trail.
[[nodiscard]] Result<void> add_staff(Database& db, const std::string& name, const std::string& token_hash,
                                     const std::string& actor, Time now);

// Revokes an active account and ends its sessions; not_found when there is none.
[[nodiscard]] Result<void> revoke_staff(Database& db, const std::string& name, const std::string& actor, Time now);

// Marks the active account `name` admin or not (audited as staff_account_admin, even when
// it already was); not_found when there is no such active account.
[[nodiscard]] Result<void> set_staff_admin(Database& db, const std::string& name, bool admin, const std::string& actor,
                                           Time now);

// Whether `name` is an active admin account.
[[nodiscard]] Result<bool> staff_admin(Database& db, const std::string& name);

// Every account, active and revoked, by name.
[[nodiscard]] Result<std::vector<StaffAccount>> list_staff(Database& db);

// The active account `name`'s token hash; nullopt when there is no such active account.
[[nodiscard]] Result<std::optional<std::string>> staff_token_hash(Database& db, const std::string& name);

// The active account whose token hashes to `token_hash`.
[[nodiscard]] Result<std::optional<std::string>> staff_with_token(Database& db, const std::string& token_hash);

struct StaffSession {
  std::string name;
  std::string csrf;
  Time created_at{};
  Time last_seen_at{};
};

// A new session for the active account `name`; audited as staff_login.
[[nodiscard]] Result<void> open_session(Database& db, const std::string& id_hash, const std::string& name,
                                        const std::string& csrf, Time now);

// The session, while its account is active (a revoked account's sessions are gone).
[[nodiscard]] Result<std::optional<StaffSession>> find_session(Database& db, const std::string& id_hash);

// Moves the session's idle clock to `now`.
[[nodiscard]] Result<void> touch_session(Database& db, const std::string& id_hash, Time now);

// Ends one session; audited as staff_logout when it existed.
[[nodiscard]] Result<void> close_session(Database& db, const std::string& id_hash, Time now);

// Deletes sessions created before `created_before` or idle since before `seen_before`;
// returns how many. Expired sessions are refused anyway; this only keeps the table small.
[[nodiscard]] Result<std::int64_t> delete_sessions(Database& db, Time created_before, Time seen_before);

}  // namespace dispatchd::store
