#include <catch2/catch.hpp>

#include "store/audit.h"
#include "store/inbox.h"
#include "store/migrations.h"
#include "store/queue.h"
#include "tests/store/store_fixture.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

using test::k_t0;

struct Fixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  std::int64_t escalation = 0;

  Fixture() {
    auto message = store::insert_inbound(db, {"whatsapp", "wamid.1", "c", "15551234567", "refund please", "{}"}, k_t0);
    REQUIRE(message);
    auto opened = store::open_escalation(
        db, {message->id, "needs_approval", "{}", R"({"action":"send_message"})"}, k_t0 + 1s);
    REQUIRE(opened);
    escalation = *opened;
  }
};

}  // namespace

TEST_CASE("queue: open -> claimed -> resolved, each step audited", "[queue]") {
  Fixture f;
  CHECK(f.db.query_int("SELECT count(*) FROM v_escalations WHERE status = 'open' AND reason = 'needs_approval'").value() == 1);
  REQUIRE(store::claim_escalation(f.db, f.escalation, "ana", k_t0 + 2s));
  CHECK(f.db.query_int("SELECT count(*) FROM v_escalations WHERE status = 'claimed' AND assignee = 'ana'").value() == 1);
  REQUIRE(store::claim_escalation(f.db, f.escalation, "ana", k_t0 + 3s));  // claiming again is harmless
  REQUIRE(store::close_escalation(f.db, f.escalation, "ana", "resolved", "approved as proposed", k_t0 + 4s));
  CHECK(f.db.query_int("SELECT count(*) FROM v_escalations WHERE status = 'resolved' AND resolved_at IS NOT NULL").value() == 1);
  CHECK(f.db.query_int("SELECT count(*) FROM v_audit WHERE event IN ('escalation', 'staff_claim', 'staff_resolved')").value() == 4);
  CHECK_FALSE(store::verify_audit(f.db)->first_broken);
}

TEST_CASE("queue: a claim by another names the holder", "[queue]") {
  Fixture f;
  REQUIRE(store::claim_escalation(f.db, f.escalation, "ana", k_t0 + 2s));
  auto taken = store::claim_escalation(f.db, f.escalation, "luis", k_t0 + 3s);
  REQUIRE_FALSE(taken);
  CHECK(taken.error() == "escalation " + std::to_string(f.escalation) + " is claimed by ana");
  auto closed_by_other = store::close_escalation(f.db, f.escalation, "luis", "dismissed", "spam", k_t0 + 4s);
  REQUIRE_FALSE(closed_by_other);
  CHECK(closed_by_other.error().ends_with("is claimed by ana"));
}

TEST_CASE("queue: a resolved item cannot be resolved, dismissed or claimed again", "[queue]") {
  Fixture f;
  REQUIRE(store::close_escalation(f.db, f.escalation, "ana", "dismissed", "duplicate", k_t0 + 2s));
  for (const char* status : {"resolved", "dismissed"}) {
    auto again = store::close_escalation(f.db, f.escalation, "ana", status, "again", k_t0 + 3s);
    REQUIRE_FALSE(again);
    CHECK(again.error().ends_with("is already dismissed"));
  }
  CHECK_FALSE(store::claim_escalation(f.db, f.escalation, "luis", k_t0 + 4s));
  CHECK_FALSE(store::close_escalation(f.db, f.escalation, "ana", "approved", "x", k_t0 + 5s));
  CHECK_FALSE(store::claim_escalation(f.db, 999, "ana", k_t0));
  CHECK(f.db.query_int("SELECT count(*) FROM v_audit WHERE event LIKE 'staff_%'").value() == 1);
}
