#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "daemon/staff_api.h"
#include "tests/staff/escalation_fixture.h"

using namespace dispatchd;

namespace {

constexpr const char* k_token = "staff-token";

// The staff API over an escalation waiting for approval, driven without a socket.
struct Api {
  test::EscalationFixture f;
  int decisions = 0;  // on_decision calls: something was put in the outbox
  daemon::StaffApi api{f.db, k_token, [this] { return std::make_shared<const catalog::Catalog>(f.catalog); },
                       [] { return test::k_t0; }, [this] { ++decisions; }};

  daemon::Response post(const std::string& verb, const std::string& body) {
    const std::string path = "/api/escalations/" + std::to_string(f.escalation) + "/" + verb;
    return api.handle({"POST", path, "", {{"authorization", std::string("Bearer ") + k_token}}, body});
  }

  // Nothing was decided: the item is open and unclaimed, its proposal still waits, and
  // the outbox holds nothing else.
  void check_nothing_decided() {
    CHECK(decisions == 0);
    CHECK(f.count("SELECT count(*) FROM v_escalations WHERE status = 'open' AND assignee IS NULL") == 1);
    CHECK(f.count("SELECT count(*) FROM v_actions WHERE status = 'proposed'") == 1);
    CHECK(f.count("SELECT count(*) FROM v_actions") == 1);
    CHECK(f.count("SELECT count(*) FROM v_audit WHERE actor <> 'dispatchd'") == 0);
  }
};

// The refusal's error, after checking the refusal's shape.
std::string refusal_error(const daemon::Response& response) {
  CHECK(response.content_type == "application/json");
  const auto body = test::parse_json(response.body);
  REQUIRE(body.IsObject());
  REQUIRE(body.HasMember("ok"));
  CHECK(body["ok"].IsFalse());
  REQUIRE(body.HasMember("error"));
  REQUIRE(body["error"].IsString());
  return body["error"].GetString();
}

std::string deep_array(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST_CASE("staff api: a well-formed decision is taken (the harness works)", "[staff]") {
  Api a;
  const auto answer = a.post("reply", R"({"as":"ana","text":"Refund sent."})");
  CHECK(answer.status == 200);
  CHECK(a.decisions == 1);
  CHECK(a.f.count("SELECT count(*) FROM v_actions WHERE action = 'staff_reply' AND created_by = 'ana'") == 1);
}

TEST_CASE("staff api: a body nested 100,000 deep is refused as 400 without recursion", "[staff]") {
  Api a;
  SECTION("the whole body") {
    const auto answer = a.post("approve", deep_array(100'000));
    CHECK(answer.status == 400);
    CHECK_THAT(refusal_error(answer), Catch::Contains("nesting deeper than"));
  }
  SECTION("inside an edit's action") {
    const auto answer = a.post("edit", R"({"as":"ana","action":)" + deep_array(100'000) + "}");
    CHECK(answer.status == 400);
    CHECK_THAT(refusal_error(answer), Catch::Contains("nesting deeper than"));
  }
  a.check_nothing_decided();
}

TEST_CASE("staff api: a body with a duplicate key is refused as 400, whichever copy would win", "[staff]") {
  Api a;
  SECTION("who decides, twice") {
    const auto answer = a.post("claim", R"({"as":"ana","as":"luis"})");
    CHECK(answer.status == 400);
    CHECK_THAT(refusal_error(answer), Catch::Contains(R"(duplicate key "as")"));
  }
  SECTION("the reply's text, twice") {
    const auto answer = a.post("reply", R"({"as":"ana","text":"Refund sent.","text":"Send me your card number."})");
    CHECK(answer.status == 400);
    CHECK_THAT(refusal_error(answer), Catch::Contains(R"(duplicate key "text")"));
  }
  a.check_nothing_decided();
}

TEST_CASE("staff api: a body that is not one JSON object is refused as 400", "[staff]") {
  Api a;
  const std::string bodies[] = {"", "{\"as\":\"ana\"", "[\"as\",\"ana\"]", "{\"as\":\"ana\"} {}",
                                "{\"as\":\"an\xff\"}"};
  for (const auto& body : bodies) {
    CAPTURE(body);
    const auto answer = a.post("claim", body);
    CHECK(answer.status == 400);
    CHECK_FALSE(refusal_error(answer).empty());
  }
  a.check_nothing_decided();
}

TEST_CASE("staff api: its answers are the documented JSON, byte for byte", "[staff]") {
  Api a;
  SECTION("a bad token") {
    const auto answer = a.api.handle({"GET", "/api/escalations", "", {{"authorization", "Bearer not-the-token"}}, ""});
    CHECK(answer.status == 401);
    CHECK(answer.body == R"({"ok":false,"error":"bad or missing staff token"})");
    CHECK(answer.headers == std::vector<std::pair<std::string, std::string>>{{"WWW-Authenticate", "Bearer"}});
  }
  SECTION("a refusal without a verdict") {
    const auto answer = a.post("shrug", R"({"as":"ana"})");
    CHECK(answer.status == 404);
    CHECK(answer.body == R"({"ok":false,"error":"unknown decision shrug","verdict":null})");
  }
  SECTION("a decision that puts nothing in the outbox") {
    CHECK(a.post("claim", R"({"as":"ana"})").body == R"({"ok":true})");
  }
  SECTION("a decision that does") {
    const auto answer = a.post("reply", R"({"as":"ana","text":"Refund sent."})");
    const std::int64_t id = a.f.count("SELECT max(action_id) FROM v_actions");
    CHECK(answer.body == R"({"ok":true,"action_id":)" + std::to_string(id) + "}");
  }
}
