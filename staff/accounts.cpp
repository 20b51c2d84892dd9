#include "staff/accounts.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "common/text.h"
#include "store/migrations.h"
#include "store/staff.h"
#include "store/transaction.h"

namespace dispatchd::staff {
namespace {

constexpr std::chrono::minutes k_touch_every{1};

AuthFailure failure_of(const store::Error& error) {
  return {error.retryable() ? AuthFailureKind::unavailable : AuthFailureKind::internal, error.message};
}

}  // namespace

std::expected<std::string, std::string> random_secret() {
  std::array<unsigned char, 32> bytes{};
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    const auto got = getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return std::unexpected(std::string("getrandom: ") + std::strerror(errno));
    }
    filled += static_cast<std::size_t>(got);
  }
  return text::hex(bytes);
}

std::string hash_secret(std::string_view secret) { return store::sha256_hex(secret); }

bool valid_account_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '@' || c == '-';
    if (!ok) return false;
  }
  return true;
}

SessionState session_state(store::Time created, store::Time last_seen, store::Time now, const SessionPolicy& policy) {
  if (now - created >= policy.max) return SessionState::expired;
  if (now - last_seen >= policy.idle) return SessionState::idle_expired;
  return SessionState::live;
}

bool needs_touch(store::Time last_seen, store::Time now) { return now - last_seen >= k_touch_every; }

std::expected<std::string, Refusal> add_account(store::Database& db, const std::string& name, const std::string& actor,
                                                store::Time now, bool admin) {
  if (!valid_account_name(name))
    return std::unexpected(
        Refusal{RefusalKind::invalid, "a staff name is 1 to 64 characters of A-Z a-z 0-9 . _ @ -", {}});
  auto token = random_secret();
  if (!token) return std::unexpected(Refusal{RefusalKind::internal, token.error(), {}});
  auto added = store::transaction<void>(db, [&]() -> store::Result<void> {
    if (auto done = store::add_staff(db, name, hash_secret(*token), actor, now); !done) return done;
    if (!admin) return {};
    return store::set_staff_admin(db, name, true, actor, now);
  });
  if (!added) return std::unexpected(to_refusal(added.error()));
  return *token;
}

std::expected<void, Refusal> set_admin(store::Database& db, const std::string& name, bool admin,
                                       const std::string& actor, store::Time now) {
  if (auto done = store::set_staff_admin(db, name, admin, actor, now); !done)
    return std::unexpected(to_refusal(done.error()));
  return {};
}

std::expected<void, Refusal> revoke_account(store::Database& db, const std::string& name, const std::string& actor,
                                            store::Time now) {
  if (auto revoked = store::revoke_staff(db, name, actor, now); !revoked)
    return std::unexpected(to_refusal(revoked.error()));
  return {};
}

std::expected<NewSession, AuthFailure> log_in(store::Database& db, const std::string& name, const std::string& token,
                                              store::Time now) {
  const AuthFailure bad{AuthFailureKind::bad, "unknown staff name or wrong token"};
  if (!valid_account_name(name) || token.empty()) return std::unexpected(bad);
  auto stored = store::staff_token_hash(db, name);
  if (!stored) return std::unexpected(failure_of(stored.error()));
  // Hashes are compared, in constant time, so the comparison tells nothing of the token.
  if (!*stored || !text::constant_time_equal(hash_secret(token), **stored)) return std::unexpected(bad);
  auto id = random_secret();
  auto csrf = random_secret();
  if (!id || !csrf) return std::unexpected(AuthFailure{AuthFailureKind::internal, id ? csrf.error() : id.error()});
  if (auto opened = store::open_session(db, hash_secret(*id), name, *csrf, now); !opened)
    return std::unexpected(failure_of(opened.error()));
  return NewSession{*id, *csrf};
}

std::expected<Staffer, AuthFailure> session_staffer(store::Database& db, const std::string& id, store::Time now,
                                                    const SessionPolicy& policy) {
  if (id.empty()) return std::unexpected(AuthFailure{AuthFailureKind::missing, "not logged in"});
  const std::string id_hash = hash_secret(id);
  auto session = store::find_session(db, id_hash);
  if (!session) return std::unexpected(failure_of(session.error()));
  if (!*session) return std::unexpected(AuthFailure{AuthFailureKind::bad, "the session is over; log in again"});
  switch (session_state((*session)->created_at, (*session)->last_seen_at, now, policy)) {
    case SessionState::expired:
      return std::unexpected(
          AuthFailure{AuthFailureKind::expired, "the session reached its maximum age; log in again"});
    case SessionState::idle_expired:
      return std::unexpected(AuthFailure{AuthFailureKind::expired, "the session was idle too long; log in again"});
    case SessionState::live: break;
  }
  if (needs_touch((*session)->last_seen_at, now)) {
    if (auto touched = store::touch_session(db, id_hash, now); !touched)
      return std::unexpected(failure_of(touched.error()));
  }
  return Staffer{(*session)->name, (*session)->csrf};
}

std::expected<Staffer, AuthFailure> token_staffer(store::Database& db, const std::string& token) {
  if (token.empty()) return std::unexpected(AuthFailure{AuthFailureKind::missing, "no token"});
  auto name = store::staff_with_token(db, hash_secret(token));
  if (!name) return std::unexpected(failure_of(name.error()));
  if (!*name) return std::unexpected(AuthFailure{AuthFailureKind::bad, "unknown or revoked staff token"});
  return Staffer{**name, std::nullopt};
}

std::expected<void, AuthFailure> log_out(store::Database& db, const std::string& id, store::Time now) {
  if (auto closed = store::close_session(db, hash_secret(id), now); !closed)
    return std::unexpected(failure_of(closed.error()));
  return {};
}

}  // namespace dispatchd::staff
