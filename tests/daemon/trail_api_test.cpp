// GET /api/messages/{message_id}/trail: the trail's JSON (staff/trail_render.h) over the
// staff API, for the page's "Trail" link; the same credentials as the rest of the API.
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "daemon/staff_api.h"
#include "staff/accounts.h"
#include "staff/decisions.h"
#include "tests/staff/escalation_fixture.h"

using namespace dispatchd;

namespace {

struct TrailApi {
  test::EscalationFixture f;
  daemon::EscalationEvents events{f.db};
  daemon::StaffApi api{f.db,
                       {"admin-token", {}, false, 10},
                       [this] { return std::make_shared<const catalog::Catalog>(f.catalog); },
                       [] { return test::k_t0; },
                       [] {},
                       events};
  std::string token = add("ana");

  std::string add(const std::string& name) {
    auto t = staff::add_account(f.db, name, "test", test::k_t0);
    REQUIRE(t);
    return *t;
  }

  daemon::Response get(const std::string& path, const std::string& method = "GET") {
    return api.handle({method, path, "", {{"authorization", "Bearer " + token}}, ""});
  }
  std::string path() const { return "/api/messages/" + std::to_string(f.message_id) + "/trail"; }
};

}  // namespace

TEST_CASE("staff api: a message's trail is its JSON document", "[staff][trail]") {
  TrailApi a;
  REQUIRE(staff::claim(a.f.db, a.f.escalation, "ana", test::k_t0 + std::chrono::minutes(1)));
  const auto answer = a.get(a.path());
  REQUIRE(answer.status == 200);
  CHECK(answer.content_type == "application/json");
  const auto body = test::parse_json(answer.body);
  CHECK(body["message"]["message_id"].GetInt64() == a.f.message_id);
  CHECK(std::string(body["message"]["text"].GetString()) == "I want my refund");
  REQUIRE(body["escalations"].Size() == 1);
  CHECK(body["escalations"][0]["escalation_id"].GetInt64() == a.f.escalation);
  CHECK(std::string(body["escalations"][0]["status"].GetString()) == "claimed");
  REQUIRE(body["actions"].Size() == 1);
  CHECK(std::string(body["actions"][0]["status"].GetString()) == "proposed");
  REQUIRE(body["staff_actions"].Size() == 1);
  CHECK(std::string(body["staff_actions"][0]["event"].GetString()) == "staff_claim");
  CHECK(std::string(body["staff_actions"][0]["actor"].GetString()) == "ana");
  CHECK(body["chain"]["verified"].GetBool());
}

TEST_CASE("staff api: the trail refuses what is not a message's trail", "[staff][trail]") {
  TrailApi a;
  CHECK(a.get("/api/messages/999/trail").status == 404);
  CHECK(a.get("/api/messages/abc/trail").status == 404);
  CHECK(a.get("/api/messages//trail").status == 404);
  CHECK(a.get("/api/messages/" + std::to_string(a.f.message_id)).status == 404);
  CHECK(a.get("/api/messages/" + std::to_string(a.f.message_id) + "/other").status == 404);
  CHECK(a.get(a.path(), "POST").status == 405);
  // No credential, no trail: it holds customers' messages.
  CHECK(a.api.handle({"GET", a.path(), "", {}, ""}).status == 401);
}
