#include <catch2/catch.hpp>
#include <set>

#include "staff/accounts.h"
#include "store/audit.h"
#include "store/staff.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

TEST_CASE("accounts: a session's state, as a table", "[accounts]") {
  const staff::SessionPolicy policy{minutes(60), hours(12)};
  const store::Time t0 = test::k_t0;
  struct Row {
    store::Time created, last_seen, now;
    staff::SessionState state;
  };
  using S = staff::SessionState;
  const Row rows[] = {
      {t0, t0, t0, S::live},
      {t0, t0, t0 + minutes(59) + seconds(59), S::live},
      {t0, t0, t0 + minutes(60), S::idle_expired},
      {t0, t0 + hours(11), t0 + hours(11) + minutes(59), S::live},
      {t0, t0 + hours(11) + minutes(59), t0 + hours(12), S::expired},  // in use, but 12 hours old
      {t0, t0, t0 + hours(13), S::expired},                            // both: the absolute limit names it
  };
  for (const auto& row : rows) CHECK(staff::session_state(row.created, row.last_seen, row.now, policy) == row.state);
  CHECK_FALSE(staff::needs_touch(t0, t0 + seconds(59)));
  CHECK(staff::needs_touch(t0, t0 + seconds(60)));
}

TEST_CASE("accounts: names that read the same everywhere", "[accounts]") {
  for (const char* good : {"ana", "Ana.Lopez", "luis_2", "ops@acme", "a-b", "x"})
    CHECK(staff::valid_account_name(good));
  for (const char* bad : {"", "ana lopez", "ana;x", "ana\n", "<script>", "añа", "a/b"}) {
    CAPTURE(bad);
    CHECK_FALSE(staff::valid_account_name(bad));
  }
  CHECK(staff::valid_account_name(std::string(64, 'a')));
  CHECK_FALSE(staff::valid_account_name(std::string(65, 'a')));
}

TEST_CASE("accounts: secrets are random, 64 hex digits, and stored only as their hash", "[accounts]") {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto secret = staff::random_secret();
    REQUIRE(secret);
    CHECK(secret->size() == 64);
    CHECK(secret->find_first_not_of("0123456789abcdef") == std::string::npos);
    seen.insert(*secret);
  }
  CHECK(seen.size() == 100);
  CHECK(staff::hash_secret("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  auto token = staff::add_account(db, "ana", "test", test::k_t0);
  REQUIRE(token);
  CHECK(
      test::query_int(db, "SELECT count(*) FROM staff_accounts WHERE token_hash = '" + staff::hash_secret(*token) + "'")
          .value() == 1);
  CHECK(test::query_int(db, "SELECT count(*) FROM staff_accounts WHERE token_hash = '" + *token + "'").value() == 0);
}

TEST_CASE("accounts: log in, use, log out, revoke", "[accounts]") {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  const staff::SessionPolicy policy;
  auto ana = staff::add_account(db, "ana", "test", test::k_t0);
  REQUIRE(ana);
  CHECK(staff::add_account(db, "ana", "test", test::k_t0).error().kind == staff::RefusalKind::state);

  CHECK(staff::log_in(db, "ana", "wrong", test::k_t0).error().kind == staff::AuthFailureKind::bad);
  CHECK(staff::log_in(db, "bob", *ana, test::k_t0).error().kind == staff::AuthFailureKind::bad);
  auto session = staff::log_in(db, "ana", *ana, test::k_t0);
  REQUIRE(session);
  CHECK(session->id != session->csrf);
  // The cookie's value is not stored, only its hash.
  CHECK(test::query_int(db, "SELECT count(*) FROM staff_sessions WHERE id_hash = '" + session->id + "'").value() == 0);

  auto who = staff::session_staffer(db, session->id, test::k_t0 + minutes(5), policy);
  REQUIRE(who);
  CHECK(who->name == "ana");
  CHECK(who->csrf == session->csrf);
  CHECK(test::query_int(db, "SELECT count(*) FROM staff_sessions WHERE last_seen_at = '" +
                                store::format_time(test::k_t0 + minutes(5)) + "'")
            .value() == 1);
  CHECK(staff::token_staffer(db, *ana)->name == "ana");
  CHECK(staff::session_staffer(db, "", test::k_t0, policy).error().kind == staff::AuthFailureKind::missing);

  SECTION("logout") {
    REQUIRE(staff::log_out(db, session->id, test::k_t0));
    CHECK(staff::session_staffer(db, session->id, test::k_t0, policy).error().kind == staff::AuthFailureKind::bad);
    REQUIRE(staff::log_out(db, session->id, test::k_t0));  // again: nothing to do
  }
  SECTION("revocation ends sessions and the token; the name comes back with a new token") {
    REQUIRE(staff::revoke_account(db, "ana", "test", test::k_t0));
    CHECK(staff::session_staffer(db, session->id, test::k_t0, policy).error().kind == staff::AuthFailureKind::bad);
    CHECK(staff::token_staffer(db, *ana).error().kind == staff::AuthFailureKind::bad);
    CHECK(staff::revoke_account(db, "ana", "test", test::k_t0).error().kind == staff::RefusalKind::not_found);
    auto again = staff::add_account(db, "ana", "test", test::k_t0 + hours(1));
    REQUIRE(again);
    CHECK(*again != *ana);
    CHECK(staff::token_staffer(db, *ana).error().kind == staff::AuthFailureKind::bad);
    CHECK(staff::token_staffer(db, *again)->name == "ana");
  }
  SECTION("expired sessions are swept") {
    auto swept = store::delete_sessions(db, test::k_t0 - hours(12), test::k_t0 + minutes(6) - minutes(60));
    REQUIRE(swept);
    CHECK(*swept == 0);
    swept = store::delete_sessions(db, test::k_t0 + hours(1) - hours(12), test::k_t0 + hours(2) - minutes(60));
    REQUIRE(swept);
    CHECK(*swept == 1);
  }
  const auto audit = test::query_int(db,
                                     "SELECT count(*) FROM v_audit WHERE event IN ('staff_account_added', "
                                     "'staff_login', 'staff_logout', 'staff_account_revoked')");
  CHECK(audit.value() >= 2);
}

TEST_CASE("accounts: the admin mark is set and cleared, audited, and lost with a revocation", "[accounts]") {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  REQUIRE(staff::add_account(db, "ana", "test", test::k_t0));
  REQUIRE(staff::add_account(db, "ops", "test", test::k_t0, true));
  CHECK_FALSE(store::staff_admin(db, "ana").value());
  CHECK(store::staff_admin(db, "ops").value());
  CHECK_FALSE(store::staff_admin(db, "nobody").value());
  REQUIRE(staff::set_admin(db, "ana", true, "test", test::k_t0));
  CHECK(store::staff_admin(db, "ana").value());
  CHECK(test::query_int(db, "SELECT count(*) FROM v_staff WHERE admin = 1").value() == 2);
  REQUIRE(staff::set_admin(db, "ana", false, "test", test::k_t0));
  CHECK_FALSE(store::staff_admin(db, "ana").value());
  CHECK(staff::set_admin(db, "nobody", true, "test", test::k_t0).error().kind == staff::RefusalKind::not_found);
  CHECK(test::query_int(db, "SELECT count(*) FROM v_audit WHERE event = 'staff_account_admin'").value() == 3);
  // A revoked admin is no admin, and comes back as an ordinary account.
  REQUIRE(staff::revoke_account(db, "ops", "test", test::k_t0));
  CHECK_FALSE(store::staff_admin(db, "ops").value());
  CHECK(staff::set_admin(db, "ops", true, "test", test::k_t0).error().kind == staff::RefusalKind::not_found);
  REQUIRE(staff::add_account(db, "ops", "test", test::k_t0 + hours(1)));
  CHECK_FALSE(store::staff_admin(db, "ops").value());
  const auto accounts = store::list_staff(db);
  REQUIRE(accounts);
  CHECK_FALSE(accounts->at(0).admin);  // ana
  const auto check = store::verify_audit(db);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
}
