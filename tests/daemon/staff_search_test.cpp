#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "store/desk.h"
#include "store/queue.h"
#include "tests/daemon/staff_api_fixture.h"
#include "tests/store/escalate_fixture.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

// The fixture's customer (15551234567) wrote twice more, a week later, and escalated again
// (the first case dismissed); another customer wrote once.
struct SearchDesk {
  test::Api a;
  std::int64_t second = 0;
  std::int64_t other = 0;

  SearchDesk() {
    REQUIRE(store::close_escalation(a.f.db, a.f.escalation, "luis", store::EscalationStatus::dismissed,
                                    "spam, said the customer", test::k_t0 + 1min));
    second = test::escalate(a.f.db, "wamid.2", test::k_customer_wa, "¿Y mi reembolso? Pedido 100% pagado",
                            store::EscalationReason::contract_failed, test::k_t0 + 24h * 7);
    other = test::escalate(a.f.db, "wamid.3", "5215500000002", "Quiero mi factura",
                           store::EscalationReason::contract_failed, test::k_t0 + 24h * 7 + 1h);
    REQUIRE(store::add_note(a.f.db, other, "luis", "Llamar el lunes", test::k_t0 + 24h * 8));
    a.now = test::k_t0 + 24h * 9;
  }

  daemon::Response get(const std::string& path, const std::string& query, const std::string& token = "") {
    return a.api.handle({"GET", path, query, {{"authorization", "Bearer " + (token.empty() ? a.ana : token)}}, ""});
  }
  // The escalation ids of a search, in the order answered.
  std::vector<std::int64_t> found(const std::string& query) {
    const auto answer = get("/api/search", query);
    REQUIRE(answer.status == 200);
    const auto body = test::parse_json(answer.body);
    std::vector<std::int64_t> ids;
    for (const auto& item : body.GetArray()) ids.push_back(item["escalation_id"].GetInt64());
    return ids;
  }
};

}  // namespace

TEST_CASE("staff api: search by customer, text, reason, status and date, newest first", "[staff][search]") {
  SearchDesk d;
  using V = std::vector<std::int64_t>;
  const std::int64_t first = d.a.f.escalation;
  CHECK(d.found("customer=%2B1+555-123-4567") == V{d.second, first});
  CHECK(d.found("text=REEMBOLSO") == V{d.second});
  CHECK(d.found("text=100%25") == V{d.second});
  CHECK(d.found("text=llamar+el") == V{d.other});  // a note's text
  CHECK(d.found("status=dismissed") == V{first});
  CHECK(d.found("reason=contract_failed&customer=15551234567") == V{d.second});
  CHECK(d.found("from=2026-12-07") == V{d.other, d.second});
  CHECK(d.found("to=2026-11-30") == V{first});
  CHECK(d.found("") == V{d.other, d.second, first});
  // Each found case carries what a listing's does, its target included.
  const auto body = test::parse_json(d.get("/api/search", "text=factura").body);
  REQUIRE(body.Size() == 1);
  CHECK(std::string(body[0]["sender"].GetString()) == "5215500000002");
  CHECK(body[0].HasMember("due_at"));
  CHECK(body[0]["breached"].IsTrue());
}

TEST_CASE("staff api: a search comes in pages, each naming the next in a Link header", "[staff][search]") {
  SearchDesk d;
  const auto page = d.get("/api/search", "limit=2&text=%C2%BF");
  CHECK(page.status == 200);
  CHECK(test::parse_json(page.body).Size() == 1);
  CHECK(page.headers.empty());
  const auto one = d.get("/api/search", "limit=1&customer=1555");
  REQUIRE(one.status == 200);
  REQUIRE(one.headers.size() == 1);
  CHECK(one.headers[0].first == "Link");
  const std::string expected =
      "</api/search?customer=1555&limit=1&before=" + std::to_string(d.second) + ">; rel=\"next\"";
  CHECK(one.headers[0].second == expected);
  const auto next = d.get("/api/search", "limit=1&customer=1555&before=" + std::to_string(d.second));
  const auto body = test::parse_json(next.body);
  REQUIRE(body.Size() == 1);
  CHECK(body[0]["escalation_id"].GetInt64() == d.a.f.escalation);
  CHECK(next.headers.empty());
}

TEST_CASE("staff api: a bad search is 400 with the reason, without a credential 401", "[staff][search]") {
  SearchDesk d;
  const auto bad = [&d](const std::string& query) { return test::refusal_error(d.get("/api/search", query)); };
  CHECK(d.get("/api/search", "from=2026-02-30").status == 400);
  CHECK(bad("from=2026-02-30") == "from is a date, YYYY-MM-DD");
  CHECK(bad("text=%zz") == "text has a broken %-escape");
  CHECK(bad("reason=nope") == "unknown reason \"nope\"");
  CHECK(bad("limit=500") == "limit is 1 to 200");
  CHECK(d.a.api.handle({"GET", "/api/search", "", {}, ""}).status == 401);
  CHECK(d.a.api.handle({"POST", "/api/search", "", {{"authorization", "Bearer " + d.a.ana}}, ""}).status == 405);
  const auto admin = d.get("/api/search", "", test::k_admin);
  CHECK(admin.status == 403);
}

TEST_CASE("staff api: a case's history has the customer's other cases and their messages, paged", "[staff][search]") {
  SearchDesk d;
  const std::string path = "/api/escalations/" + std::to_string(d.second) + "/history";
  const auto first = test::parse_json(d.get(path, "limit=1").body);
  REQUIRE(first["cases"].Size() == 1);
  CHECK(first["cases"][0]["escalation_id"].GetInt64() == d.a.f.escalation);
  CHECK(std::string(first["cases"][0]["status"].GetString()) == "dismissed");
  CHECK(std::string(first["cases"][0]["resolution"].GetString()) == "spam, said the customer");
  REQUIRE(first["messages"].Size() == 1);
  CHECK(std::string(first["messages"][0]["text"].GetString()) == "¿Y mi reembolso? Pedido 100% pagado");
  CHECK(first["messages"][0]["escalation_id"].GetInt64() == d.second);
  REQUIRE(first["next"].IsInt64());
  const auto older = test::parse_json(d.get(path, "limit=1&before=" + std::to_string(first["next"].GetInt64())).body);
  CHECK(older["cases"].IsNull());
  REQUIRE(older["messages"].Size() == 1);
  CHECK(std::string(older["messages"][0]["text"].GetString()) == "I want my refund");
  CHECK(older["messages"][0]["escalation_id"].GetInt64() == d.a.f.escalation);
  CHECK(older["next"].IsNull());
  CHECK(d.get("/api/escalations/999/history", "").status == 404);
  CHECK(d.get(path, "before=x").status == 400);
  CHECK(d.get(path, "limit=0").status == 400);
}
