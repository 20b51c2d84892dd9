// Hand-overs of a claim and internal notes (staff/handover.h): the rule as a table, then
// each hand-over and note against a real store, the audit chain verified after each.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "staff/accounts.h"
#include "staff/handover.h"
#include "store/audit.h"
#include "store/views.h"
#include "tests/staff/escalation_fixture.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using test::k_t0;

namespace {

using Kind = store::HandOverKind;
using Rule = store::HandOverRule;
using Refused = staff::HandOverRefusalKind;
using Status = store::EscalationStatus;

constexpr std::chrono::minutes k_idle{30};

struct RuleRow {
  const char* name;
  Status status;
  std::optional<std::string> holder;
  std::chrono::minutes held_for;  // now - claimed_at
  bool holder_revoked;
  std::string actor;
  bool actor_is_admin;
  Kind kind;
  std::optional<std::string> to;
  bool to_active;
  std::optional<Rule> allowed;
  std::optional<Refused> refused;
  std::int64_t minutes_left = 0;
};

void check_rule(const RuleRow& row) {
  CAPTURE(row.name);
  const store::Time now = k_t0 + 10h;
  const store::ClaimState claim{1, row.status, row.holder, now - row.held_for, row.holder_revoked};
  const auto got =
      staff::hand_over_rule(claim, {row.kind, row.actor, row.actor_is_admin, row.to, row.to_active}, now, k_idle);
  if (row.allowed) {
    REQUIRE(got);
    CHECK(*got == *row.allowed);
  } else {
    REQUIRE_FALSE(got);
    CHECK(got.error().kind == *row.refused);
    CHECK(got.error().minutes_left == row.minutes_left);
  }
}

struct Desk {
  test::EscalationFixture f;
  Desk() {
    REQUIRE(staff::add_account(f.db, "ana", "test", k_t0));
    REQUIRE(staff::add_account(f.db, "luis", "test", k_t0));
    REQUIRE(staff::claim(f.db, f.escalation, "luis", k_t0));
  }
  std::expected<Rule, staff::Refusal> ask(Kind kind, const std::string& actor, store::Time at,
                                          std::optional<std::string> to = std::nullopt, bool admin = false) {
    return staff::hand_over(f.db, f.escalation, {kind, actor, admin, std::move(to), false}, "", at, k_idle);
  }
  void check_chain() {
    auto check = store::verify_audit(f.db);
    REQUIRE(check);
    CHECK_FALSE(check->first_broken);
  }
};

}  // namespace

TEST_CASE("handover: the rule, one row per case", "[staff][handover]") {
  const std::optional<std::string> luis = "luis";
  const std::optional<std::string> none;
  // clang-format off
  const std::vector<RuleRow> rows = {
    {"the holder releases",               Status::claimed, luis, 1min,  false, "luis", false, Kind::release,  none,  false, Rule::holder, {}},
    {"another person cannot release",     Status::claimed, luis, 90min, false, "ana",  false, Kind::release,  none,  false, {}, Refused::not_holder},
    {"an admin cannot release",           Status::claimed, luis, 90min, false, "ana",  true,  Kind::release,  none,  false, {}, Refused::not_holder},
    {"an idle claim is taken over",       Status::claimed, luis, 30min, false, "ana",  false, Kind::takeover, none,  false, Rule::idle, {}},
    {"a claim idle for long is taken",    Status::claimed, luis, 9h,    false, "ana",  false, Kind::takeover, none,  false, Rule::idle, {}},
    {"a fresh claim is not idle yet",     Status::claimed, luis, 12min, false, "ana",  false, Kind::takeover, none,  false, {}, Refused::not_idle, 18},
    {"a few seconds short is a minute",   Status::claimed, luis, 29min, false, "ana",  false, Kind::takeover, none,  false, {}, Refused::not_idle, 1},
    {"a revoked holder's claim at once",  Status::claimed, luis, 0min,  true,  "ana",  false, Kind::takeover, none,  false, Rule::holder_revoked, {}},
    {"the holder cannot take it over",    Status::claimed, luis, 90min, false, "luis", false, Kind::takeover, none,  false, {}, Refused::already_holder},
    {"an admin reassigns",                Status::claimed, luis, 1min,  false, "admin", true, Kind::reassign, "ana", true,  Rule::admin, {}},
    {"a non-admin cannot reassign",       Status::claimed, luis, 90min, false, "ana",  false, Kind::reassign, "ana", true,  {}, Refused::not_admin},
    {"the target must be active",         Status::claimed, luis, 1min,  false, "admin", true, Kind::reassign, "bo",  false, {}, Refused::target_not_active},
    {"no reassignment to the holder",     Status::claimed, luis, 1min,  false, "admin", true, Kind::reassign, "luis", true, {}, Refused::already_holder},
    {"an open item has no claim",         Status::open,    none, 0min,  false, "ana",  false, Kind::takeover, none,  false, {}, Refused::not_claimed},
    {"an open item is not released",      Status::open,    none, 0min,  false, "ana",  false, Kind::release,  none,  false, {}, Refused::not_claimed},
    {"an open item is not reassigned",    Status::open,    none, 0min,  false, "admin", true, Kind::reassign, "ana", true,  {}, Refused::not_claimed},
    {"a resolved item is closed",         Status::resolved, luis, 90min, false, "luis", false, Kind::release, none,  false, {}, Refused::closed},
    {"a dismissed item is closed",        Status::dismissed, luis, 90min, true, "ana", false, Kind::takeover, none,  false, {}, Refused::closed},
  };
  // clang-format on
  for (const auto& row : rows) check_rule(row);
}

TEST_CASE("handover: refusals say what is wrong and map to the API's statuses", "[staff][handover]") {
  CHECK(staff::describe({Refused::not_idle, "luis", 12}, 2) ==
        "escalation 2 is claimed by luis and not idle yet: a take-over is allowed in 12 minutes");
  CHECK(staff::describe({Refused::not_holder, "luis", 0}, 2) ==
        "escalation 2 is claimed by luis: only the holder releases it");
  CHECK(staff::refusal_kind(Refused::not_admin) == staff::RefusalKind::forbidden);
  CHECK(staff::refusal_kind(Refused::target_not_active) == staff::RefusalKind::not_found);
  for (const auto kind :
       {Refused::closed, Refused::not_claimed, Refused::not_holder, Refused::already_holder, Refused::not_idle})
    CHECK(staff::refusal_kind(kind) == staff::RefusalKind::state);
}

TEST_CASE("handover: the holder releases, the item is open again and anyone may claim it", "[staff][handover]") {
  Desk d;
  auto refused = d.ask(Kind::release, "ana", k_t0 + 1min);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == staff::RefusalKind::state);
  REQUIRE(staff::hand_over(d.f.db, d.f.escalation, {Kind::release, "luis"}, "off shift", k_t0 + 2min, k_idle));
  CHECK(d.f.count("SELECT count(*) FROM v_escalations WHERE status = 'open' AND assignee IS NULL"
                  " AND claimed_at IS NULL") == 1);
  CHECK(d.f.count("SELECT count(*) FROM v_audit WHERE event = 'staff_release' AND actor = 'luis'") == 1);
  d.check_chain();
  REQUIRE(staff::claim(d.f.db, d.f.escalation, "ana", k_t0 + 3min));
  auto item = store::show_escalation(d.f.db, d.f.escalation);
  REQUIRE(item);
  REQUIRE(item->hand_overs.size() == 1);
  CHECK(item->hand_overs[0].kind == store::HandOverKind::release);
  CHECK(item->hand_overs[0].from == "luis");
  CHECK_FALSE(item->hand_overs[0].to);
  CHECK(item->hand_overs[0].rule == store::HandOverRule::holder);
  CHECK(item->hand_overs[0].note == "off shift");
}

TEST_CASE("handover: a take-over waits for the idle limit, then the taker holds the claim", "[staff][handover]") {
  Desk d;
  auto early = d.ask(Kind::takeover, "ana", k_t0 + 29min);
  REQUIRE_FALSE(early);
  CHECK(early.error().kind == staff::RefusalKind::state);
  CHECK_THAT(early.error().message, Catch::Contains("in 1 minute"));
  // The holder's note is activity: the idle clock starts again.
  REQUIRE(staff::add_note(d.f.db, d.f.escalation, "luis", "waiting for the courier", k_t0 + 20min));
  CHECK_FALSE(d.ask(Kind::takeover, "ana", k_t0 + 31min));
  auto taken = d.ask(Kind::takeover, "ana", k_t0 + 50min);
  REQUIRE(taken);
  CHECK(*taken == Rule::idle);
  CHECK(d.f.count("SELECT count(*) FROM v_escalations WHERE status = 'claimed' AND assignee = 'ana'") == 1);
  CHECK(d.f.count("SELECT count(*) FROM v_audit WHERE event = 'staff_takeover' AND actor = 'ana'") == 1);
  d.check_chain();
  // Now ana's: luis can neither release it nor decide it.
  CHECK_FALSE(d.ask(Kind::release, "luis", k_t0 + 51min));
  CHECK_FALSE(staff::claim(d.f.db, d.f.escalation, "luis", k_t0 + 51min));
}

TEST_CASE("handover: a revoked holder's claim is taken over at once", "[staff][handover]") {
  Desk d;
  REQUIRE(staff::revoke_account(d.f.db, "luis", "test", k_t0 + 1min));
  auto taken = d.ask(Kind::takeover, "ana", k_t0 + 2min);
  REQUIRE(taken);
  CHECK(*taken == Rule::holder_revoked);
  CHECK(d.f.count("SELECT count(*) FROM v_escalations WHERE assignee = 'ana'") == 1);
  d.check_chain();
}

TEST_CASE("handover: an admin reassigns to an active account only", "[staff][handover]") {
  Desk d;
  auto not_admin = d.ask(Kind::reassign, "ana", k_t0 + 1min, "ana");
  REQUIRE_FALSE(not_admin);
  CHECK(not_admin.error().kind == staff::RefusalKind::forbidden);
  auto nobody = d.ask(Kind::reassign, "admin", k_t0 + 1min, "bo", true);
  REQUIRE_FALSE(nobody);
  CHECK(nobody.error().kind == staff::RefusalKind::not_found);
  REQUIRE(staff::revoke_account(d.f.db, "ana", "test", k_t0 + 1min));
  CHECK_FALSE(d.ask(Kind::reassign, "admin", k_t0 + 2min, "ana", true));
  REQUIRE(staff::add_account(d.f.db, "ana", "test", k_t0 + 3min));
  auto moved = d.ask(Kind::reassign, "admin", k_t0 + 4min, "ana", true);
  REQUIRE(moved);
  CHECK(*moved == Rule::admin);
  CHECK(d.f.count("SELECT count(*) FROM v_escalations WHERE assignee = 'ana'") == 1);
  CHECK(d.f.count("SELECT count(*) FROM v_audit WHERE event = 'staff_reassign' AND actor = 'admin'") == 1);
  d.check_chain();
  auto item = store::show_escalation(d.f.db, d.f.escalation);
  REQUIRE(item);
  REQUIRE(item->hand_overs.size() == 1);
  CHECK(item->hand_overs[0].from == "luis");
  CHECK(item->hand_overs[0].to == "ana");
  CHECK(item->hand_overs[0].rule == store::HandOverRule::admin);
}

TEST_CASE("handover: notes are stored, audited, never in the outbox, and allowed on closed items",
          "[staff][handover]") {
  Desk d;
  const auto actions_before = d.f.count("SELECT count(*) FROM v_actions");
  auto note =
      staff::add_note(d.f.db, d.f.escalation, "ana", "Customer called: refund approved by finance.", k_t0 + 1min);
  REQUIRE(note);
  CHECK(d.f.count("SELECT count(*) FROM v_notes WHERE author = 'ana' AND text LIKE 'Customer called%'") == 1);
  CHECK(d.f.count("SELECT count(*) FROM v_audit WHERE event = 'staff_note' AND actor = 'ana'") == 1);
  CHECK(d.f.count("SELECT count(*) FROM v_actions") == actions_before);
  d.check_chain();
  SECTION("empty, too long and invalid UTF-8 are refused") {
    CHECK(staff::add_note(d.f.db, d.f.escalation, "ana", "", k_t0 + 2min).error().kind == staff::RefusalKind::invalid);
    CHECK_FALSE(staff::add_note(d.f.db, d.f.escalation, "ana", std::string(4097, 'x'), k_t0 + 2min));
    CHECK(staff::add_note(d.f.db, d.f.escalation, "ana", std::string(4096, 'x'), k_t0 + 2min));
    CHECK_FALSE(staff::add_note(d.f.db, d.f.escalation, "ana", "\xff", k_t0 + 2min));
    CHECK(staff::add_note(d.f.db, 999, "ana", "x", k_t0 + 2min).error().kind == staff::RefusalKind::not_found);
  }
  SECTION("a closed escalation takes notes") {
    REQUIRE(staff::dismiss(d.f.db, d.f.escalation, "luis", "duplicate", k_t0 + 2min));
    REQUIRE(staff::add_note(d.f.db, d.f.escalation, "ana", "Agreed: it was a duplicate.", k_t0 + 3min));
    auto item = store::show_escalation(d.f.db, d.f.escalation);
    REQUIRE(item);
    REQUIRE(item->notes.size() == 2);
    CHECK(item->notes[1].author == "ana");
    d.check_chain();
  }
}
