#pragma once
// Who is acting on the staff API: named accounts, their personal tokens and browser
// sessions. Secrets (tokens, session ids, CSRF tokens) are 256 random bits from the
// kernel, written as 64 hex digits; the store keeps only a token's or session id's
// SHA-256, so reading the database never yields a way in.
//
// A session ends `idle` after its last use or `max` after its login, whichever is first,
// and at once when its account is revoked. The idle clock is written at most once a
// minute (needs_touch), so reading the queue is not a write per request.

#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "staff/decisions.h"
#include "store/database.h"
#include "store/inbox.h"

namespace dispatchd::staff {

// 32 bytes from getrandom(2), as 64 lower-case hex digits; an error only when the kernel
// gives no randomness.
[[nodiscard]] std::expected<std::string, std::string> random_secret();

// Lower-case hex SHA-256: what the store keeps of a token or a session id.
std::string hash_secret(std::string_view secret);

// 1 to 64 characters of A-Z a-z 0-9 . _ @ -: a name that reads the same in logs,
// cookies, URLs and the audit trail.
bool valid_account_name(std::string_view name);

struct SessionPolicy {
  std::chrono::minutes idle{60};
  std::chrono::hours max{12};
};

enum class SessionState { live, idle_expired, expired };

// Pure: the state of a session created at `created` and last used at `last_seen`.
SessionState session_state(store::Time created, store::Time last_seen, store::Time now, const SessionPolicy& policy);

// Pure: true when the session's idle clock should be written (a minute or more old).
bool needs_touch(store::Time last_seen, store::Time now);

// Why a request is not authenticated. `missing`, `bad` and `expired` are the caller's
// (401); `unavailable` is the store's and may work later (503); `internal` is a bug (500).
enum class AuthFailureKind { missing, bad, expired, unavailable, internal };

struct AuthFailure {
  AuthFailureKind kind = AuthFailureKind::bad;
  std::string message;
};

// The authenticated account; `csrf` is set when the request came with a session cookie
// (then every state-changing request must echo it).
struct Staffer {
  std::string name;
  std::optional<std::string> csrf;
};

// Creates an account (an admin one with `admin`, in the same transaction); returns its
// personal token, which exists only in this answer.
[[nodiscard]] std::expected<std::string, Refusal> add_account(store::Database& db, const std::string& name,
                                                              const std::string& actor, store::Time now,
                                                              bool admin = false);

// Marks an active account admin (it may reassign claims) or not.
[[nodiscard]] std::expected<void, Refusal> set_admin(store::Database& db, const std::string& name, bool admin,
                                                     const std::string& actor, store::Time now);

[[nodiscard]] std::expected<void, Refusal> revoke_account(store::Database& db, const std::string& name,
                                                          const std::string& actor, store::Time now);

struct NewSession {
  std::string id;  // the cookie's value
  std::string csrf;
};

// Checks `name` and `token` (in constant time) and opens a session.
[[nodiscard]] std::expected<NewSession, AuthFailure> log_in(store::Database& db, const std::string& name,
                                                            const std::string& token, store::Time now);

// The account holding session `id`, moving its idle clock when due.
[[nodiscard]] std::expected<Staffer, AuthFailure> session_staffer(store::Database& db, const std::string& id,
                                                                  store::Time now, const SessionPolicy& policy);

// The account whose personal token is `token`.
[[nodiscard]] std::expected<Staffer, AuthFailure> token_staffer(store::Database& db, const std::string& token);

// Ends session `id` (nothing to do when it is already gone).
[[nodiscard]] std::expected<void, AuthFailure> log_out(store::Database& db, const std::string& id, store::Time now);

}  // namespace dispatchd::staff
