#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "store/audit.h"
#include "store/escalation_feed.h"
#include "tests/daemon/staff_api_fixture.h"
#include "tests/store/escalate_fixture.h"

using namespace dispatchd;

namespace {

using test::Api;
using test::Headers;
using test::k_admin;
using test::log_in;
using test::Login;
using test::refusal_error;

std::string deep_array(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST_CASE("staff api: a well-formed decision is taken (the harness works)", "[staff]") {
  Api a;
  const auto answer = a.post("reply", R"({"as":"ana","text":"Refund sent."})");
  CHECK(answer.status == 200);
  CHECK(a.decisions == 1);
  CHECK(a.f.count("SELECT count(*) FROM v_actions WHERE action = 'staff_reply' AND created_by = 'ana'") == 1);
}

TEST_CASE("staff api: the actor is the authenticated account, never a name in the body", "[staff]") {
  Api a;
  CHECK(a.post("claim", R"({"as":"mallory"})", a.luis).status == 200);
  CHECK(a.f.count("SELECT count(*) FROM v_escalations WHERE assignee = 'luis'") == 1);
  CHECK(a.f.count("SELECT count(*) FROM v_audit WHERE actor = 'mallory'") == 0);
  CHECK(a.f.count("SELECT count(*) FROM v_audit WHERE event = 'staff_claim' AND actor = 'luis'") == 1);
  // Someone else's claim: ana's decision is refused and names the holder.
  const auto answer = a.post("approve", "{}");
  CHECK(answer.status == 409);
  CHECK_THAT(refusal_error(answer), Catch::Contains("claimed by luis"));
}

TEST_CASE("staff api: a second decision on a resolved item is refused", "[staff]") {
  Api a;
  CHECK(a.post("approve", "{}").status == 200);
  CHECK(a.decisions == 1);
  const auto again = a.post("approve", "{}");
  CHECK(again.status == 409);
  CHECK_THAT(refusal_error(again), Catch::Contains("already resolved"));
  CHECK(a.post("dismiss", R"({"note":"late"})").status == 409);
  CHECK(a.decisions == 1);
  CHECK(a.f.count("SELECT count(*) FROM v_actions WHERE status = 'approved'") == 1);
}

TEST_CASE("staff api: an edit outside the catalog's enum is refused with the validator's message", "[staff]") {
  Api a;
  const auto answer =
      a.post("edit", R"({"action":{"action":"send_message","recipient":"15551234567","content":"Done.",)"
                     R"("priority":"urgent"}})");
  CHECK(answer.status == 409);
  const auto body = test::parse_json(answer.body);
  REQUIRE(body["verdict"].IsObject());
  const auto& errors = body["verdict"]["errors"];
  REQUIRE(errors.IsArray());
  REQUIRE(errors.Size() >= 1);
  CHECK(std::string(errors[0]["path"].GetString()) == "/priority");
  CHECK_THAT(std::string(errors[0]["message"].GetString()), Catch::Contains("high"));
  a.check_nothing_decided();
  // Fixed, the same edit goes to the outbox under ana's name.
  CHECK(a.post("edit", R"({"action":{"action":"send_message","recipient":"15551234567","content":"Done.",)"
                       R"("priority":"low"}})")
            .status == 200);
  CHECK(a.f.count("SELECT count(*) FROM v_actions WHERE status = 'approved' AND created_by = 'ana' AND "
                  "body = 'Done.'") == 1);
}

TEST_CASE("staff api: logging in gives a strict cookie and a CSRF token, a bad pair is 401", "[staff]") {
  Api a;
  SECTION("good") {
    const auto answer = a.call("POST", "/api/session", {}, R"({"name":"ana","token":")" + a.ana + "\"}");
    CHECK(answer.status == 200);
    REQUIRE(answer.headers.size() == 1);
    CHECK(answer.headers[0].first == "Set-Cookie");
    CHECK_THAT(answer.headers[0].second, Catch::StartsWith("dispatchd_session="));
    CHECK_THAT(answer.headers[0].second, Catch::EndsWith("; HttpOnly; SameSite=Strict; Path=/; Max-Age=43200"));
    const auto body = test::parse_json(answer.body);
    CHECK(std::string(body["name"].GetString()) == "ana");
    CHECK(std::string(body["csrf"].GetString()).size() == 64);
    CHECK(a.f.count("SELECT count(*) FROM v_audit WHERE event = 'staff_login' AND actor = 'ana'") == 1);
  }
  SECTION("bad") {
    const std::string bodies[] = {R"({"name":"ana","token":")" + a.luis + "\"}",
                                  R"({"name":"nobody","token":")" + a.ana + "\"}", R"({"name":"ana","token":""})"};
    for (const auto& body : bodies) {
      const auto answer = a.call("POST", "/api/session", {}, body);
      CHECK(answer.status == 401);
      CHECK(answer.headers == Headers{{"WWW-Authenticate", "Bearer"}});
    }
    CHECK(a.call("POST", "/api/session", {}, R"({"name":"ana"})").status == 400);
    CHECK(a.f.count("SELECT count(*) FROM staff_sessions") == 0);
  }
}

TEST_CASE("staff api: with a session cookie, a decision needs the CSRF token", "[staff]") {
  Api a;
  const Login login = log_in(a, "ana", a.ana);
  const std::string path = "/api/escalations/" + std::to_string(a.f.escalation) + "/claim";
  SECTION("missing") { CHECK(a.call("POST", path, {{"cookie", login.cookie}}, "{}").status == 403); }
  SECTION("wrong") {
    CHECK(a.call("POST", path, {{"cookie", login.cookie}, {"x-csrf-token", std::string(64, '0')}}, "{}").status == 403);
  }
  SECTION("another session's") {
    const Login other = log_in(a, "luis", a.luis);
    CHECK(a.call("POST", path, {{"cookie", login.cookie}, {"x-csrf-token", other.csrf}}, "{}").status == 403);
  }
  a.check_nothing_decided();
  // Reading needs none; the right token decides.
  CHECK(a.call("GET", "/api/escalations", {{"cookie", "theme=dark; " + login.cookie}}).status == 200);
  CHECK(a.call("POST", path, {{"cookie", login.cookie}, {"x-csrf-token", login.csrf}}, "{}").status == 200);
  CHECK(a.f.count("SELECT count(*) FROM v_escalations WHERE assignee = 'ana'") == 1);
}

TEST_CASE("staff api: a session ends idle, at its maximum age, on logout and on revocation", "[staff]") {
  Api a;
  const Login login = log_in(a, "ana", a.ana);
  const Headers cookie{{"cookie", login.cookie}};
  SECTION("a reloaded page gets its name and CSRF token back") {
    const auto answer = a.call("GET", "/api/session", cookie);
    CHECK(answer.status == 200);
    CHECK(std::string(test::parse_json(answer.body)["csrf"].GetString()) == login.csrf);
  }
  SECTION("idle for 60 minutes") {
    a.now += std::chrono::minutes(59);
    CHECK(a.call("GET", "/api/escalations", cookie).status == 200);  // moves the idle clock
    a.now += std::chrono::minutes(59);
    CHECK(a.call("GET", "/api/escalations", cookie).status == 200);
    a.now += std::chrono::minutes(60);
    const auto answer = a.call("GET", "/api/escalations", cookie);
    CHECK(answer.status == 401);
    CHECK_THAT(refusal_error(answer), Catch::Contains("idle"));
  }
  SECTION("in use for 12 hours") {
    for (int i = 0; i < 23; ++i) {
      a.now += std::chrono::minutes(30);
      REQUIRE(a.call("GET", "/api/escalations", cookie).status == 200);
    }
    a.now += std::chrono::minutes(30);
    const auto answer = a.call("GET", "/api/escalations", cookie);
    CHECK(answer.status == 401);
    CHECK_THAT(refusal_error(answer), Catch::Contains("maximum age"));
  }
  SECTION("logout") {
    CHECK(a.call("DELETE", "/api/session", cookie).status == 403);  // without the CSRF token
    const auto answer = a.call("DELETE", "/api/session", {{"cookie", login.cookie}, {"x-csrf-token", login.csrf}});
    CHECK(answer.status == 204);
    CHECK(answer.headers ==
          Headers{{"Set-Cookie", "dispatchd_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"}});
    CHECK(a.call("GET", "/api/escalations", cookie).status == 401);
  }
  SECTION("revoked by the admin") {
    CHECK(a.call("DELETE", "/api/staff/ana", {{"authorization", std::string("Bearer ") + k_admin}}).status == 200);
    CHECK(a.call("GET", "/api/escalations", cookie).status == 401);
    CHECK(a.post("claim", "{}").status == 401);  // the personal token too
    CHECK(a.f.count("SELECT count(*) FROM staff_sessions") == 0);
  }
}

TEST_CASE("staff api: the admin token manages accounts and reads no queue", "[staff]") {
  Api a;
  const Headers admin{{"authorization", std::string("Bearer ") + k_admin}};
  const auto added = a.call("POST", "/api/staff", admin, R"({"name":"marta"})");
  REQUIRE(added.status == 200);
  const std::string token = test::parse_json(added.body)["token"].GetString();
  CHECK(a.post("claim", "{}", token).status == 200);
  CHECK(a.f.count("SELECT count(*) FROM v_escalations WHERE assignee = 'marta'") == 1);
  CHECK(a.call("POST", "/api/staff", admin, R"({"name":"marta"})").status == 409);
  CHECK(a.call("POST", "/api/staff", admin, R"({"name":"not a name"})").status == 409);
  CHECK(a.call("GET", "/api/escalations", admin).status == 403);
  CHECK(a.call("POST", "/api/staff", {{"authorization", "Bearer " + a.ana}}, R"({"name":"eve"})").status == 403);
  CHECK(a.call("DELETE", "/api/staff/nobody", admin).status == 404);
  CHECK(a.f.count("SELECT count(*) FROM v_audit WHERE event = 'staff_account_added' AND actor = 'admin'") == 1);
}

TEST_CASE("staff api: the queue filters by status, reason and channel", "[staff]") {
  Api a;
  const Headers auth{{"authorization", "Bearer " + a.ana}};
  const auto count = [&](const std::string& query) {
    const auto answer = a.api.handle({"GET", "/api/escalations", query, auth, ""});
    REQUIRE(answer.status == 200);
    return test::parse_json(answer.body).Size();
  };
  CHECK(count("") == 1);
  CHECK(count("status=open&reason=needs_approval&channel=whatsapp") == 1);
  CHECK(count("reason=contract_failed") == 0);
  CHECK(count("channel=gmail") == 0);
  CHECK(count("status=resolved") == 0);
  CHECK(a.api.handle({"GET", "/api/escalations", "reason=bogus", auth, ""}).status == 400);
  CHECK(a.api.handle({"GET", "/api/escalations", "channel=sms", auth, ""}).status == 400);
}

TEST_CASE("staff api: the queue comes in pages, each naming the next in a Link header", "[staff]") {
  Api a;
  const Headers auth{{"authorization", "Bearer " + a.ana}};
  for (int i = 0; i < 4; ++i) {
    test::escalate(a.f.db, "page" + std::to_string(i), "15550001", "hi", store::EscalationReason::undecodable,
                   test::k_t0 + std::chrono::minutes(i + 1));
  }
  // Five open escalations (the fixture's and four), two a page, oldest first.
  std::vector<std::int64_t> seen;
  std::string query = "status=open&limit=2";
  for (int page = 0; page < 3; ++page) {
    const auto answer = a.api.handle({"GET", "/api/escalations", query, auth, ""});
    REQUIRE(answer.status == 200);
    const auto rows = test::parse_json(answer.body);
    CHECK(rows.Size() == (page < 2 ? 2u : 1u));
    for (const auto& row : rows.GetArray()) seen.push_back(row["escalation_id"].GetInt64());
    const auto link =
        std::find_if(answer.headers.begin(), answer.headers.end(), [](const auto& h) { return h.first == "Link"; });
    if (page == 2) {
      CHECK(link == answer.headers.end());
      break;
    }
    REQUIRE(link != answer.headers.end());
    CHECK(link->second ==
          "</api/escalations?status=open&limit=2&after=" + std::to_string(seen.back()) + ">; rel=\"next\"");
    query = link->second.substr(link->second.find('?') + 1, link->second.find('>') - link->second.find('?') - 1);
  }
  CHECK(seen.size() == 5);
  CHECK(std::is_sorted(seen.begin(), seen.end()));
  CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
  for (const std::string bad : {"limit=0", "limit=501", "limit=ten", "after=-3", "after=x"})
    CHECK(a.api.handle({"GET", "/api/escalations", bad, auth, ""}).status == 400);
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
    const auto answer = a.call("GET", "/api/escalations", {{"authorization", "Bearer not-the-token"}});
    CHECK(answer.status == 401);
    CHECK(answer.body == R"({"ok":false,"error":"unknown or revoked staff token","verdict":null})");
    CHECK(answer.headers == std::vector<std::pair<std::string, std::string>>{{"WWW-Authenticate", "Bearer"}});
  }
  SECTION("a refusal without a verdict") {
    const auto answer = a.post("shrug", "{}");
    CHECK(answer.status == 404);
    CHECK(answer.body == R"({"ok":false,"error":"unknown decision shrug","verdict":null})");
  }
  SECTION("a decision that puts nothing in the outbox") { CHECK(a.post("claim", "{}").body == R"({"ok":true})"); }
  SECTION("a decision that does") {
    const auto answer = a.post("reply", R"({"as":"ana","text":"Refund sent."})");
    const std::int64_t id = a.f.count("SELECT max(action_id) FROM v_actions");
    CHECK(answer.body == R"({"ok":true,"action_id":)" + std::to_string(id) + "}");
  }
}

TEST_CASE("staff api: the page's files are served without a credential, under a strict CSP", "[staff]") {
  Api a;
  const auto page = a.call("GET", "/staff/", {});
  CHECK(page.status == 200);
  CHECK_THAT(page.content_type, Catch::StartsWith("text/html"));
  bool csp = false;
  for (const auto& [name, value] : page.headers) {
    if (name == "Content-Security-Policy") {
      csp = true;
      CHECK_THAT(value, Catch::Contains("script-src 'self'") && Catch::Contains("default-src 'none'"));
      CHECK_THAT(value, !Catch::Contains("unsafe-inline"));
    }
  }
  CHECK(csp);
  CHECK(a.call("GET", "/staff", {}).status == 301);
  CHECK(a.call("GET", "/staff/../api/escalations", {}).status == 404);
  CHECK(a.call("GET", "/staff/nope.js", {}).status == 404);
}

TEST_CASE("staff api: a listing, a case and a trail are reads to run elsewhere, the rest is answered at once",
          "[staff]") {
  Api a;
  const Headers auth{{"authorization", "Bearer " + a.ana}};
  const std::string item = "/api/escalations/" + std::to_string(a.f.escalation);
  const std::string trail = "/api/messages/" + std::to_string(a.f.message_id) + "/trail";
  for (const auto& [path, query] :
       std::vector<std::pair<std::string, std::string>>{{"/api/escalations", "status=open"}, {item, ""}, {trail, ""}}) {
    INFO(path);
    auto routed = a.api.prepare({"GET", path, query, auth, ""});
    auto* read = std::get_if<daemon::Read>(&routed);
    REQUIRE(read != nullptr);
    // The read holds what it needs: it runs on another connection, with the request gone.
    auto other = test::open_db(a.f.dir);
    REQUIRE(other);
    const auto answer = (*read)(*other);
    CHECK(answer.status == 200);
    CHECK(answer.body == a.api.handle({"GET", path, query, auth, ""}).body);
  }
  // Refused before any read: no credential, a bad filter, a missing message id, a POST.
  const auto answered_now = [&](const std::string& method, const std::string& path, const std::string& query,
                                const Headers& headers, const std::string& body = "") {
    auto routed = a.api.prepare({method, path, query, headers, body});
    REQUIRE(std::holds_alternative<daemon::Response>(routed));
    return std::get<daemon::Response>(routed).status;
  };
  CHECK(answered_now("GET", "/api/escalations", "", {}) == 401);
  CHECK(answered_now("GET", "/api/escalations", "status=bogus", auth) == 400);
  CHECK(answered_now("GET", "/api/messages/x/trail", "", auth) == 404);
  CHECK(answered_now("GET", "/api/catalog", "", auth) == 200);
  CHECK(answered_now("POST", item + "/claim", "", auth, "{}") == 200);
}

namespace {

// The audit chain verifies after a hand-over or a note.
void check_audit_chain(Api& a) {
  auto check = store::verify_audit(a.f.db);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
}

}  // namespace

TEST_CASE("staff api: the holder releases a claim, nobody else does", "[staff][desk]") {
  Api a;
  REQUIRE(a.post("claim", "{}", a.luis).status == 200);
  const auto not_holder = a.post("release", "{}");
  CHECK(not_holder.status == 409);
  CHECK_THAT(refusal_error(not_holder), Catch::Contains("claimed by luis"));
  const auto released = a.post("release", R"({"note":"going home"})", a.luis);
  CHECK(released.status == 200);
  CHECK(released.body == R"({"ok":true,"rule":"holder"})");
  CHECK(a.f.count("SELECT count(*) FROM v_escalations WHERE status = 'open' AND assignee IS NULL") == 1);
  CHECK(a.f.count("SELECT count(*) FROM v_audit WHERE event = 'staff_release' AND actor = 'luis'") == 1);
  check_audit_chain(a);
  CHECK(a.post("release", "{}", a.luis).status == 409);  // open: nothing to release
  CHECK(a.post("claim", "{}").status == 200);            // ana may claim it now
  CHECK(a.decisions == 0);
}

TEST_CASE("staff api: a claim idle past staff.claim_idle_minutes is taken over", "[staff][desk]") {
  Api a;
  REQUIRE(a.post("claim", "{}", a.luis).status == 200);
  a.now += std::chrono::minutes(10);
  const auto early = a.post("takeover", "{}");
  CHECK(early.status == 409);
  CHECK_THAT(refusal_error(early), Catch::Contains("a take-over is allowed in 20 minutes"));
  const std::string path = "/api/escalations/" + std::to_string(a.f.escalation);
  const auto shown = test::parse_json(a.call("GET", path, {{"authorization", "Bearer " + a.ana}}).body);
  CHECK(shown["takeover_in_minutes"].GetInt64() == 20);
  a.now += std::chrono::minutes(20);
  const auto taken = a.post("takeover", R"({"note":"customer waiting"})");
  CHECK(taken.status == 200);
  CHECK(taken.body == R"({"ok":true,"rule":"idle"})");
  CHECK(a.f.count("SELECT count(*) FROM v_escalations WHERE status = 'claimed' AND assignee = 'ana'") == 1);
  check_audit_chain(a);
  // The case shows the hand-over; luis is now refused, ana decides.
  const auto item = test::parse_json(a.call("GET", path, {{"authorization", "Bearer " + a.ana}}).body);
  REQUIRE(item["hand_overs"].Size() == 1);
  CHECK(std::string(item["hand_overs"][0]["kind"].GetString()) == "takeover");
  CHECK(std::string(item["hand_overs"][0]["from"].GetString()) == "luis");
  CHECK(std::string(item["hand_overs"][0]["to"].GetString()) == "ana");
  CHECK(std::string(item["hand_overs"][0]["rule"].GetString()) == "idle");
  CHECK(std::string(item["hand_overs"][0]["note"].GetString()) == "customer waiting");
  CHECK(a.post("approve", "{}", a.luis).status == 409);
  CHECK(a.post("approve", "{}").status == 200);
}

TEST_CASE("staff api: revoking the holder makes the claim takeable at once", "[staff][desk]") {
  Api a;
  REQUIRE(a.post("claim", "{}", a.luis).status == 200);
  const Headers admin{{"authorization", std::string("Bearer ") + k_admin}};
  REQUIRE(a.call("DELETE", "/api/staff/luis", admin).status == 200);
  const auto taken = a.post("takeover", "{}");
  CHECK(taken.status == 200);
  CHECK(taken.body == R"({"ok":true,"rule":"holder_revoked"})");
  check_audit_chain(a);
}

TEST_CASE("staff api: only the admin token reassigns, and only to an active account", "[staff][desk]") {
  Api a;
  REQUIRE(a.post("claim", "{}", a.luis).status == 200);
  const std::string path = "/api/escalations/" + std::to_string(a.f.escalation) + "/reassign";
  const Headers admin{{"authorization", std::string("Bearer ") + k_admin}};
  CHECK(a.post("reassign", R"({"to":"ana"})").status == 403);  // a staff token is not an admin
  CHECK(a.call("POST", path, admin, R"({"to":"nobody"})").status == 404);
  CHECK(a.call("POST", path, admin, "{}").status == 400);
  CHECK(a.call("POST", path, admin, R"({"to":"luis"})").status == 409);  // the holder already
  CHECK(a.call("GET", path, admin).status == 405);
  const auto moved = a.call("POST", path, admin, R"({"to":"ana","note":"luis is on leave"})");
  CHECK(moved.status == 200);
  CHECK(moved.body == R"({"ok":true,"rule":"admin"})");
  CHECK(a.f.count("SELECT count(*) FROM v_escalations WHERE assignee = 'ana'") == 1);
  CHECK(a.f.count("SELECT count(*) FROM v_audit WHERE event = 'staff_reassign' AND actor = 'admin'") == 1);
  check_audit_chain(a);
  // The admin token still decides nothing else.
  CHECK(a.call("POST", "/api/escalations/" + std::to_string(a.f.escalation) + "/takeover", admin, "{}").status == 403);
  CHECK(a.call("POST", "/api/escalations/" + std::to_string(a.f.escalation) + "/notes", admin, R"({"text":"x"})")
            .status == 403);
}

TEST_CASE("staff api: notes are stored, shown in the case, audited and never sent", "[staff][desk]") {
  Api a;
  const auto login = log_in(a, "luis", a.luis);
  const std::string path = "/api/escalations/" + std::to_string(a.f.escalation);
  CHECK(a.call("POST", path + "/notes", {{"cookie", login.cookie}}, R"({"text":"x"})").status == 403);  // no CSRF
  const auto added = a.call("POST", path + "/notes", {{"cookie", login.cookie}, {"x-csrf-token", login.csrf}},
                            R"({"text":"Called the customer: wants a refund, not a credit."})");
  CHECK(added.status == 200);
  CHECK(a.post("notes", R"({"text":""})").status == 409);
  CHECK(a.post("notes", R"({"text":")" + std::string(4097, 'x') + "\"}").status == 409);
  CHECK(a.decisions == 0);
  CHECK(a.f.count("SELECT count(*) FROM v_actions") == 1);  // the proposal only
  CHECK(a.f.count("SELECT count(*) FROM v_notes WHERE author = 'luis'") == 1);
  CHECK(a.f.count("SELECT count(*) FROM v_audit WHERE event = 'staff_note' AND actor = 'luis'") == 1);
  CHECK(a.f.count("SELECT count(*) FROM v_escalations WHERE status = 'open'") == 1);  // a note claims nothing
  check_audit_chain(a);
  const auto item = test::parse_json(a.call("GET", path, {{"authorization", "Bearer " + a.ana}}).body);
  REQUIRE(item["notes"].Size() == 1);
  CHECK(std::string(item["notes"][0]["author"].GetString()) == "luis");
  CHECK(std::string(item["notes"][0]["text"].GetString()) == "Called the customer: wants a refund, not a credit.");
  CHECK(item["takeover_in_minutes"].IsNull());
  CHECK(
      a.call("POST", "/api/escalations/999/notes", {{"authorization", "Bearer " + a.ana}}, R"({"text":"x"})").status ==
      404);
}

TEST_CASE("staff api: an account marked admin reassigns with its own credential", "[staff][desk]") {
  Api a;
  REQUIRE(a.post("claim", "{}", a.luis).status == 200);
  const std::string ops = a.add("ops");
  CHECK(a.post("reassign", R"({"to":"ana"})", ops).status == 403);
  REQUIRE(staff::set_admin(a.f.db, "ops", true, "test", a.now));
  const auto moved = a.post("reassign", R"({"to":"ana","note":"luis is out today"})", ops);
  CHECK(moved.status == 200);
  CHECK(moved.body == R"({"ok":true,"rule":"admin"})");
  CHECK(a.f.count("SELECT count(*) FROM v_escalations WHERE assignee = 'ana'") == 1);
  CHECK(a.f.count("SELECT count(*) FROM v_audit WHERE event = 'staff_reassign' AND actor = 'ops'") == 1);
  check_audit_chain(a);
  REQUIRE(staff::set_admin(a.f.db, "ops", false, "test", a.now));
  CHECK(a.post("reassign", R"({"to":"luis"})", ops).status == 403);
}

TEST_CASE("staff api: each listed case carries its due time, whether it is breached and the minutes left",
          "[staff][targets]") {
  Api a;
  const Headers auth{{"authorization", "Bearer " + a.ana}};
  const auto later = test::escalate(a.f.db, "late1", "15550001", "hi", store::EscalationReason::undecodable,
                                    test::k_t0 + std::chrono::minutes(30));
  a.now = test::k_t0 + std::chrono::minutes(70);
  // The default target is 60 minutes for every reason: the fixture's case (opened at k_t0) is
  // 10 minutes late, the later one has 20 minutes left.
  auto rows = test::parse_json(a.api.handle({"GET", "/api/escalations", "", auth, ""}).body);
  REQUIRE(rows.Size() == 2);
  const auto& first = rows[0];
  CHECK(first["escalation_id"].GetInt64() == a.f.escalation);
  CHECK(std::string(first["due_at"].GetString()) == store::format_time(test::k_t0 + std::chrono::minutes(60)));
  CHECK(first["breached"].IsTrue());
  CHECK(first["minutes_left"].GetInt64() == -10);
  const auto& second = rows[1];
  CHECK(second["escalation_id"].GetInt64() == later);
  CHECK(second["breached"].IsFalse());
  CHECK(second["minutes_left"].GetInt64() == 20);

  // A claim stops the clock: a claimed case has no minutes left, and one whose breach was
  // recorded while it was open keeps the mark.
  REQUIRE(store::notice_breach(a.f.db, a.f.escalation, test::k_t0 + std::chrono::minutes(60), a.now).value());
  REQUIRE(store::claim_escalation(a.f.db, a.f.escalation, "ana", a.now));
  REQUIRE(store::claim_escalation(a.f.db, later, "luis", a.now));
  rows = test::parse_json(a.api.handle({"GET", "/api/escalations", "", auth, ""}).body);
  REQUIRE(rows.Size() == 2);
  CHECK(rows[0]["breached"].IsTrue());
  CHECK(rows[0]["minutes_left"].IsNull());
  CHECK(rows[1]["breached"].IsFalse());
  CHECK(rows[1]["minutes_left"].IsNull());
}

TEST_CASE("staff api: saved replies are listed by staff, managed by admins, sent filled through the checks",
          "[staff][saved_replies]") {
  Api a;
  const Headers admin{{"authorization", std::string("Bearer ") + k_admin}};
  const Headers ana{{"authorization", "Bearer " + a.ana}};
  const std::string marta = a.add("marta");
  REQUIRE(staff::set_admin(a.f.db, "marta", true, "test", test::k_t0));
  const Headers as_marta{{"authorization", "Bearer " + marta}};

  // Only admins change them: 403 for another account, whatever it asks.
  CHECK(a.call("POST", "/api/replies", ana, R"({"name":"hi","text":"Hi"})").status == 403);
  const auto added = a.call("POST", "/api/replies", as_marta, R"({"name":"hi","text":"Hi {customer}, {staff} here."})");
  REQUIRE(added.status == 200);
  const auto id = std::to_string(test::parse_json(added.body)["id"].GetInt64());
  CHECK(a.call("PUT", "/api/replies/" + id, ana, R"({"text":"x"})").status == 403);
  CHECK(a.call("DELETE", "/api/replies/" + id, ana).status == 403);
  // The admin token too; its actor is "admin".
  const auto by_token = a.call("POST", "/api/replies", admin, R"({"name":"bye","text":"Bye {{not a placeholder}}"})");
  REQUIRE(by_token.status == 200);
  const auto bye = std::to_string(test::parse_json(by_token.body)["id"].GetInt64());
  CHECK(a.f.count("SELECT count(*) FROM v_audit WHERE event = 'saved_reply_added' AND actor = 'admin'") == 1);
  CHECK(a.f.count("SELECT count(*) FROM v_audit WHERE event = 'saved_reply_added' AND actor = 'marta'") == 1);

  // An unknown placeholder is refused when saved, naming it; a name in use is 409.
  const auto unknown = a.call("POST", "/api/replies", as_marta, R"({"name":"x","text":"Hi {name}"})");
  CHECK(unknown.status == 400);
  CHECK_THAT(refusal_error(unknown), Catch::Contains("{name}"));
  CHECK(a.call("PUT", "/api/replies/" + id, as_marta, R"({"text":"{oops"})").status == 400);
  CHECK(a.call("POST", "/api/replies", as_marta, R"({"name":"hi","text":"again"})").status == 409);
  CHECK(a.call("POST", "/api/replies", as_marta, R"({"name":"hi"})").status == 400);
  CHECK(a.call("POST", "/api/replies", as_marta, "not json").status == 400);
  CHECK(a.call("PUT", "/api/replies/999", as_marta, R"({"text":"x"})").status == 404);
  CHECK(a.call("DELETE", "/api/replies/999", as_marta).status == 404);
  CHECK(a.call("DELETE", "/api/replies/abc", as_marta).status == 404);
  CHECK(a.call("GET", "/api/replies", {}).status == 401);

  // Any staff member lists them, and sees them filled for a case.
  const auto list = test::parse_json(a.call("GET", "/api/replies", ana).body);
  REQUIRE(list.IsArray());
  CHECK(list.Size() == 2);
  const std::string case_path = "/api/escalations/" + std::to_string(a.f.escalation);
  const auto filled = a.call("GET", case_path + "/replies", ana);
  REQUIRE(filled.status == 200);
  const auto filled_json = test::parse_json(filled.body);
  REQUIRE(filled_json.IsArray());
  REQUIRE(filled_json.Size() == 2);
  CHECK(std::string(filled_json[0]["text"].GetString()) == "Bye {not a placeholder}");
  CHECK(std::string(filled_json[1]["text"].GetString()) == "Hi 15551234567, ana here.");
  CHECK(a.call("GET", "/api/escalations/999/replies", ana).status == 404);

  SECTION("with a session, a change needs the CSRF token") {
    const Login login = log_in(a, "marta", marta);
    CHECK(a.call("DELETE", "/api/replies/" + id, {{"cookie", login.cookie}}).status == 403);
    CHECK(a.call("DELETE", "/api/replies/" + id, {{"cookie", login.cookie}, {"x-csrf-token", login.csrf}}).status ==
          200);
    CHECK(a.f.count("SELECT count(*) FROM v_audit WHERE event = 'saved_reply_removed' AND actor = 'marta'") == 1);
    CHECK(a.post("reply", R"({"saved_reply":)" + id + "}").status == 404);
  }
  SECTION("a filled text over the cap is refused as any reply is") {
    const std::string text = std::string(staff::k_max_reply_code_points - 10, 'a') + "{customer}";
    REQUIRE(a.call("PUT", "/api/replies/" + id, admin, R"({"text":")" + text + "\"}").status == 200);
    CHECK(a.post("reply", R"({"saved_reply":)" + id + "}").status == 409);
    CHECK(a.decisions == 0);
    CHECK(a.f.count("SELECT count(*) FROM v_actions WHERE action = 'staff_reply'") == 0);
    CHECK(a.f.count("SELECT count(*) FROM v_escalations WHERE status = 'open'") == 1);
  }
  SECTION("sent filled, it reaches the outbox as a staff reply") {
    const auto sent = a.post("reply", R"({"saved_reply":)" + id + "}");
    REQUIRE(sent.status == 200);
    CHECK(a.decisions == 1);
    CHECK(a.f.count("SELECT count(*) FROM v_actions WHERE action = 'staff_reply' AND created_by = 'ana' AND body = "
                    "'Hi 15551234567, ana here.'") == 1);
  }
  const auto check = store::verify_audit(a.f.db);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
}
