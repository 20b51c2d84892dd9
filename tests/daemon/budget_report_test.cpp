// The daily budget as the daemon reports it (daemon/budget_report.h): read from the store's
// counters, one log line per change, GET /api/budget's body, and the /metrics gauges.
#include <catch2/catch.hpp>

#include "daemon/budget_report.h"
#include "daemon/metrics.h"
#include "daemon/staff_api.h"
#include "staff/accounts.h"
#include "store/attempts.h"
#include "tests/store/store_fixture.h"
#include "tests/test_util.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

void spend(store::Database& db, const std::string& wamid, double usd, store::Time at) {
  auto stored = store::insert_inbound(db, {"whatsapp", wamid, "1555", "1555", "hola", "{}"}, at);
  REQUIRE(stored);
  REQUIRE(store::record_attempt(
      db,
      {.message_id = stored->id, .provider = "openai", .model = "m", .verdict = store::Verdict::valid, .cost_usd = usd},
      at));
}

}  // namespace

TEST_CASE("budget report: the daily budget from the store, one log line per change", "[daemon][budget]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const agent::Budget budget{.daily_usd = 1.0};
  daemon::BudgetLog log;

  auto none = daemon::daily_budget(db, agent::Budget{.conversation_daily_usd = 1.0}, test::k_t0);
  REQUIRE(none);
  CHECK_FALSE(*none);  // no daily budget: nothing to report

  const auto status_at = [&](store::Time now) {
    auto daily = daemon::daily_budget(db, budget, now);
    REQUIRE(daily);
    REQUIRE(*daily);
    return **daily;
  };
  CHECK(log.change(budget, status_at(test::k_t0)) == "daily budget open: 0.0000 of 1.0000 USD today");
  spend(db, "wamid.1", 0.6, test::k_t0);
  CHECK_FALSE(log.change(budget, status_at(test::k_t0)));  // still open: no line
  spend(db, "wamid.2", 0.6, test::k_t0 + 1h);
  CHECK(log.change(budget, status_at(test::k_t0 + 1h)) ==
        "daily budget spent: 1.2000 of 1.0000 USD today; model calls wait until 2026-12-01T00:00:00Z");
  CHECK_FALSE(log.change(budget, status_at(test::k_t0 + 2h)));
  CHECK(daemon::budget_json(budget, status_at(test::k_t0 + 2h)) ==
        R"({"daily_usd":1.0,"state":"spent","spent_usd":1.2,"unpriced_attempts":0,"until":"2026-12-01T00:00:00Z",)"
        R"("text":"daily budget spent: 1.2000 of 1.0000 USD today; model calls wait until 2026-12-01T00:00:00Z"})");
  // The next UTC day: its counters are empty.
  CHECK(log.change(budget, status_at(test::k_t0 + 12h)) == "daily budget open: 0.0000 of 1.0000 USD today");
  CHECK(daemon::budget_json(agent::Budget{}, std::nullopt) ==
        R"({"daily_usd":null,"state":null,"spent_usd":0.0,"unpriced_attempts":0,"until":null,"text":null})");
}

TEST_CASE("budget report: GET /api/budget for staff", "[daemon][budget]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  spend(db, "wamid.1", 0.25, test::k_t0);
  auto token = staff::add_account(db, "ana", "test", test::k_t0);
  REQUIRE(token);
  daemon::EscalationEvents events{db};
  daemon::StaffApiSettings settings;
  settings.budget = {.daily_usd = 2.0};
  daemon::StaffApi api{db,
                       settings,
                       [] { return std::make_shared<const catalog::Catalog>(test::support_en()); },
                       [] { return test::k_t0; },
                       [] {},
                       events};
  const auto answer = api.handle({"GET", "/api/budget", "", {{"authorization", "Bearer " + *token}}, ""});
  CHECK(answer.status == 200);
  CHECK(answer.body == R"({"daily_usd":2.0,"state":"open","spent_usd":0.25,"unpriced_attempts":0,"until":null,)"
                       R"("text":"daily budget open: 0.2500 of 2.0000 USD today"})");
  CHECK(api.handle({"GET", "/api/budget", "", {}, ""}).status == 401);
  CHECK(api.handle({"POST", "/api/budget", "", {{"authorization", "Bearer " + *token}}, ""}).status == 405);
}

TEST_CASE("budget report: /metrics has the daily budget's gauges only when one is set", "[daemon][budget]") {
  const store::MetricsSnapshot snapshot;
  daemon::ProcessGauges gauges;
  CHECK_THAT(daemon::render_metrics(snapshot, gauges, test::k_t0), !Catch::Contains("dispatchd_budget_"));
  gauges.budget = {5.0, {5.25, 10, 2}, true};
  const std::string text = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CHECK_THAT(text, Catch::Contains("\ndispatchd_budget_daily_limit_usd 5.000000000\n"));
  CHECK_THAT(text, Catch::Contains("\ndispatchd_budget_daily_spent_usd 5.250000000\n"));
  CHECK_THAT(text, Catch::Contains("\ndispatchd_budget_daily_unpriced_attempts 2\n"));
  CHECK_THAT(text, Catch::Contains("\ndispatchd_budget_daily_closed 1\n"));
}
