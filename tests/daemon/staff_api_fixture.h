#pragma once
// The staff API driven without a socket (daemon/staff_api.h), for its tests: an escalation
// waiting for approval, two accounts (ana, luis), the admin token and a clock the test moves.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/staff_api.h"
#include "staff/accounts.h"
#include "tests/staff/escalation_fixture.h"

namespace dispatchd::test {

inline constexpr const char* k_admin = "admin-token";

using Headers = std::vector<std::pair<std::string, std::string>>;

// The staff API over an escalation waiting for approval, driven without a socket, with
// two accounts (ana, luis) and a clock the test moves.
struct Api {
  test::EscalationFixture f;
  int decisions = 0;  // on_decision calls: something was put in the outbox
  store::Time now = test::k_t0;
  daemon::EscalationEvents events{f.db};
  daemon::StaffApi api{f.db,
                       {k_admin, {}, false},
                       [this] { return std::make_shared<const catalog::Catalog>(f.catalog); },
                       [this] { return now; },
                       [this] { ++decisions; },
                       events};
  std::string ana = add("ana");
  std::string luis = add("luis");

  std::string add(const std::string& name) {
    auto token = staff::add_account(f.db, name, "test", test::k_t0);
    REQUIRE(token);
    return *token;
  }

  daemon::Response call(const std::string& method, const std::string& path, const Headers& headers,
                        const std::string& body = "") {
    return api.handle({method, path, "", headers, body});
  }
  // A decision on the fixture's escalation with ana's personal token.
  daemon::Response post(const std::string& verb, const std::string& body, const std::string& token = "") {
    const std::string path = "/api/escalations/" + std::to_string(f.escalation) + "/" + verb;
    return call("POST", path, {{"authorization", "Bearer " + (token.empty() ? ana : token)}}, body);
  }

  // Nothing was decided: the item is open and unclaimed, its proposal still waits, and
  // the outbox holds nothing else.
  void check_nothing_decided() {
    CHECK(decisions == 0);
    CHECK(f.count("SELECT count(*) FROM v_escalations WHERE status = 'open' AND assignee IS NULL") == 1);
    CHECK(f.count("SELECT count(*) FROM v_actions WHERE status = 'proposed'") == 1);
    CHECK(f.count("SELECT count(*) FROM v_actions") == 1);
    CHECK(f.count("SELECT count(*) FROM v_audit WHERE event LIKE 'staff\\_%' ESCAPE '\\' AND event NOT IN "
                  "('staff_account_added', 'staff_login', 'staff_logout')") == 0);
  }
};

// A browser's login: the cookie to send back and the CSRF token.
struct Login {
  std::string cookie;
  std::string csrf;
};

inline Login log_in(Api& a, const std::string& name, const std::string& token) {
  const auto answer = a.call("POST", "/api/session", {}, R"({"name":")" + name + R"(","token":")" + token + "\"}");
  REQUIRE(answer.status == 200);
  REQUIRE(answer.headers.size() == 1);
  const std::string set_cookie = answer.headers[0].second;
  const auto body = test::parse_json(answer.body);
  return {set_cookie.substr(0, set_cookie.find(';')), body["csrf"].GetString()};
}

// The refusal's error, after checking the refusal's shape.
inline std::string refusal_error(const daemon::Response& response) {
  CHECK(response.content_type == "application/json");
  const auto body = test::parse_json(response.body);
  REQUIRE(body.IsObject());
  REQUIRE(body.HasMember("ok"));
  CHECK(body["ok"].IsFalse());
  REQUIRE(body.HasMember("error"));
  REQUIRE(body["error"].IsString());
  return body["error"].GetString();
}

}  // namespace dispatchd::test
