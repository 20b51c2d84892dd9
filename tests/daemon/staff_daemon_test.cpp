// The staff API against a running daemon: the real Service (listener, agent, outbox pump)
// on a real socket, a fake model that answers garbage three times (so the message escalates
// as contract_failed) and a fake Graph API that records what is sent.
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "config/config.h"
#include "connectors/whatsapp/signature.h"
#include "daemon/service.h"
#include "net/curl_transport.h"
#include "store/audit.h"
#include "tests/connectors/whatsapp_fixture.h"
#include "tests/fakes/fake_graph.h"
#include "tests/fakes/fake_model_server.h"
#include "tests/io_run.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;

namespace {

constexpr const char* k_daemon_admin = "daemon-test-admin-token";
constexpr const char* k_access_token = "daemon-test-access-token";

struct Answer {
  int status = 0;
  std::string body;
  net::Headers headers;
  rapidjson::Document json() const { return test::parse_json(body); }
};

struct RunningDaemon {
  test::TempDir dir;
  fakes::FakeModelServer model;
  fakes::FakeGraph graph{{.access_token = k_access_token, .phone_number_id = test::k_phone_number_id}};
  boost::asio::io_context io;
  std::unique_ptr<daemon::Service> service;
  net::CurlTransport client{io};

  RunningDaemon() {
    model.set_fallback(fakes::FakeReply::text("Claro, con gusto te ayudo."));  // never JSON
    setenv("STAFF_DAEMON_TEST_LLM_KEY", "sk-fake", 1);
    setenv("STAFF_DAEMON_TEST_ACCESS", k_access_token, 1);
    setenv("STAFF_DAEMON_TEST_SECRET", test::k_app_secret, 1);
    setenv("STAFF_DAEMON_TEST_VERIFY", "verify", 1);
    setenv("STAFF_DAEMON_TEST_ADMIN", k_daemon_admin, 1);
    const std::string path = dir.file("dispatchd.json");
    std::ofstream(path) << "{" << test::database_config_keys(dir) << R"(,
      "catalog": ")" << test::source_path("catalog/examples/support.en.json")
                        << R"(",
      "migrations": {"dir": ")"
                        << test::source_path("migrations") << R"("},
      "http": {"listen": "127.0.0.1:0"},
      "llm": {"provider": "openai", "base_url": ")"
                        << model.base_url(fakes::Dialect::openai) << R"(",
              "model": "fake", "api_key_env": "STAFF_DAEMON_TEST_LLM_KEY"},
      "connectors": {"whatsapp": {"enabled": true, "graph_base_url": ")"
                        << graph.base_url() << R"(",
        "phone_number_id": ")"
                        << test::k_phone_number_id << R"(",
        "access_token_env": "STAFF_DAEMON_TEST_ACCESS", "app_secret_env": "STAFF_DAEMON_TEST_SECRET",
        "verify_token_env": "STAFF_DAEMON_TEST_VERIFY"}},
      "staff": {"token_env": "STAFF_DAEMON_TEST_ADMIN"}})";
    auto config = config::load(path);
    REQUIRE(config);
    auto created = daemon::Service::create(std::move(*config), io);
    if (!created) FAIL(created.error());
    service = std::move(*created);
    REQUIRE(service->start());
  }

  ~RunningDaemon() {
    bool stopped = false;
    service->shutdown(std::chrono::seconds(2), [&] { stopped = true; });
    test::run_until(io, [&] { return stopped; });
  }

  Answer call(const std::string& method, const std::string& path, net::Headers headers = {},
              const std::string& body = "") {
    std::optional<net::HttpResult> result;
    client.send({method, "http://127.0.0.1:" + std::to_string(service->port()) + path, std::move(headers), body},
                [&](net::HttpResult r) { result = std::move(r); });
    test::run_until(io, [&] { return result.has_value(); });
    REQUIRE(*result);
    return {(*result)->status, (*result)->body, (*result)->headers};
  }

  std::string add_staff(const std::string& name) {
    const auto added = call("POST", "/api/staff", {{"Authorization", std::string("Bearer ") + k_daemon_admin}},
                            R"({"name":")" + name + "\"}");
    REQUIRE(added.status == 200);
    return added.json()["token"].GetString();
  }

  // A customer message the fake model cannot answer: an open contract_failed escalation.
  std::int64_t escalation(const std::string& token) {
    const std::string body = test::text_webhook(1);
    REQUIRE(call("POST", "/webhooks/whatsapp", {{"X-Hub-Signature-256", whatsapp::sign_body(body, test::k_app_secret)}},
                 body)
                .status == 200);
    std::int64_t id = 0;
    test::run_until(io, [&] {
      const auto listed = call("GET", "/api/escalations?status=open", {{"Authorization", "Bearer " + token}});
      const auto rows = listed.json();
      if (!rows.IsArray() || rows.Empty()) return false;
      id = rows[0]["escalation_id"].GetInt64();
      return true;
    });
    return id;
  }

  // The database as an auditor sees it, through a second connection.
  std::int64_t count(const std::string& sql) {
    auto db = test::open_db(dir, store::Database::Mode::existing);
    REQUIRE(db);
    return test::query_int(*db, sql).value();
  }
};

struct Session {
  std::string cookie;
  std::string csrf;
};

Session log_in(RunningDaemon& d, const std::string& name, const std::string& token) {
  const auto answer = d.call("POST", "/api/session", {}, R"({"name":")" + name + R"(","token":")" + token + "\"}");
  REQUIRE(answer.status == 200);
  const std::string set_cookie(answer.headers.get("Set-Cookie").value_or(""));
  CHECK_THAT(set_cookie, Catch::Contains("HttpOnly; SameSite=Strict; Path=/"));
  return {set_cookie.substr(0, set_cookie.find(';')), answer.json()["csrf"].GetString()};
}

}  // namespace

TEST_CASE("staff daemon: a contract_failed escalation worked over the API reaches the store and the outbox",
          "[staff-daemon]") {
  RunningDaemon d;
  const std::string ana = d.add_staff("ana");
  const std::string luis = d.add_staff("luis");
  const std::int64_t id = d.escalation(ana);
  const std::string base = "/api/escalations/" + std::to_string(id);

  // The case shows the three failed attempts.
  const auto shown = d.call("GET", base, {{"Authorization", "Bearer " + ana}});
  REQUIRE(shown.status == 200);
  const auto c = shown.json();
  CHECK(std::string(c["reason"].GetString()) == "contract_failed");
  CHECK(c["attempts"].Size() == 3);

  // Logging in: a wrong token is 401; then the cookie without or with a wrong CSRF token is 403.
  CHECK(d.call("POST", "/api/session", {}, R"({"name":"ana","token":")" + luis + "\"}").status == 401);
  const Session session = log_in(d, "ana", ana);
  CHECK(d.call("POST", base + "/claim", {{"Cookie", session.cookie}}, "{}").status == 403);
  CHECK(d.call("POST", base + "/claim", {{"Cookie", session.cookie}, {"X-CSRF-Token", "0"}}, "{}").status == 403);
  CHECK(d.count("SELECT count(*) FROM v_escalations WHERE status = 'open'") == 1);

  // The claim is ana's, whatever the body says.
  const net::Headers as_ana{{"Cookie", session.cookie}, {"X-CSRF-Token", session.csrf}};
  CHECK(d.call("POST", base + "/claim", as_ana, R"({"as":"mallory"})").status == 200);
  CHECK(d.count("SELECT count(*) FROM v_escalations WHERE assignee = 'ana' AND status = 'claimed'") == 1);
  CHECK(d.count("SELECT count(*) FROM v_audit WHERE actor = 'mallory'") == 0);
  const auto taken = d.call("POST", base + "/reply", {{"Authorization", "Bearer " + luis}}, R"({"text":"hi"})");
  CHECK(taken.status == 409);
  CHECK_THAT(taken.body, Catch::Contains("claimed by ana"));

  // An edit outside the enum is refused with the validator's message at its pointer.
  const std::string sender = "5215510000001";
  const auto edit = [&](const std::string& priority) {
    return d.call("POST", base + "/edit", as_ana,
                  R"({"action":{"action":"send_message","recipient":")" + sender +
                      R"(","content":"Your invoice is on its way.","priority":")" + priority + "\"}}");
  };
  const auto refused = edit("urgent");
  CHECK(refused.status == 409);
  const auto verdict = refused.json();
  REQUIRE(verdict["verdict"]["errors"].IsArray());
  CHECK(std::string(verdict["verdict"]["errors"][0]["path"].GetString()) == "/priority");
  CHECK(d.count("SELECT count(*) FROM v_actions WHERE created_by = 'ana'") == 0);

  // Fixed, it is approved, stored under ana's name and sent to the customer.
  CHECK(edit("high").status == 200);
  test::run_until(d.io, [&] {
    for (const auto& r : d.graph.requests())
      if (r.type == "text" && r.text == "Your invoice is on its way.") return true;
    return false;
  });
  const auto requests = d.graph.requests();
  CHECK(std::count_if(requests.begin(), requests.end(), [](const auto& r) { return r.type == "text"; }) == 1);
  CHECK(d.count("SELECT count(*) FROM v_actions WHERE created_by = 'ana' AND action = 'send_message'") == 1);
  CHECK(d.count("SELECT count(*) FROM v_escalations WHERE status = 'resolved' AND assignee = 'ana'") == 1);

  // A second decision on the resolved item is refused.
  const auto again = edit("high");
  CHECK(again.status == 409);
  CHECK_THAT(again.body, Catch::Contains("already resolved"));
}

TEST_CASE("staff daemon: sessions end at their maximum age and on revocation, bad credentials are 401",
          "[staff-daemon]") {
  RunningDaemon d;
  const std::string ana = d.add_staff("ana");
  CHECK(d.call("GET", "/api/escalations").status == 401);
  CHECK(d.call("GET", "/api/escalations", {{"Authorization", "Bearer nope"}}).status == 401);
  CHECK(d.call("GET", "/api/escalations", {{"Authorization", std::string("Bearer ") + k_daemon_admin}}).status == 403);

  const Session first = log_in(d, "ana", ana);
  CHECK(d.call("GET", "/api/session", {{"Cookie", first.cookie}}).status == 200);
  // Twelve hours after login (the row aged by hand: the daemon's clock is the real one).
  {
    auto db = test::open_db(d.dir, store::Database::Mode::existing);
    REQUIRE(db);
    REQUIRE(test::exec(*db, "UPDATE staff_sessions SET created_at = '2000-01-01T00:00:00Z'"));
  }
  const auto expired = d.call("GET", "/api/escalations", {{"Cookie", first.cookie}});
  CHECK(expired.status == 401);
  CHECK_THAT(expired.body, Catch::Contains("maximum age"));

  const Session second = log_in(d, "ana", ana);
  CHECK(d.call("DELETE", "/api/staff/ana", {{"Authorization", std::string("Bearer ") + k_daemon_admin}}).status == 200);
  CHECK(d.call("GET", "/api/escalations", {{"Cookie", second.cookie}}).status == 401);
  CHECK(d.call("GET", "/api/escalations", {{"Authorization", "Bearer " + ana}}).status == 401);
}

TEST_CASE("staff daemon: a claim changes hands and takes notes through the running service", "[staff-daemon]") {
  RunningDaemon d;
  const std::string ana = d.add_staff("ana");
  const std::string luis = d.add_staff("luis");
  const std::int64_t id = d.escalation(ana);
  const std::string base = "/api/escalations/" + std::to_string(id);
  const net::Headers as_ana{{"Authorization", "Bearer " + ana}};
  const net::Headers as_luis{{"Authorization", "Bearer " + luis}};
  const net::Headers as_admin{{"Authorization", std::string("Bearer ") + k_daemon_admin}};

  REQUIRE(d.call("POST", base + "/claim", as_luis, "{}").status == 200);
  // staff.claim_idle_minutes is 30 by default: a fresh claim is not idle.
  const auto early = d.call("POST", base + "/takeover", as_ana, "{}");
  CHECK(early.status == 409);
  CHECK_THAT(early.body, Catch::Contains("a take-over is allowed in 30 minutes"));
  CHECK(d.call("POST", base + "/notes", as_luis, R"({"text":"waiting for the courier's answer"})").status == 200);
  {  // An hour later (the row aged by hand: the daemon's clock is the real one).
    auto db = test::open_db(d.dir, store::Database::Mode::existing);
    REQUIRE(db);
    REQUIRE(test::exec(*db, "UPDATE escalations SET claimed_at = '2000-01-01T00:00:00Z'"));
  }
  const auto taken = d.call("POST", base + "/takeover", as_ana, R"({"note":"luis is off today"})");
  CHECK(taken.status == 200);
  CHECK(taken.body == R"({"ok":true,"rule":"idle"})");
  CHECK(d.call("POST", base + "/reassign", as_ana, R"({"to":"luis"})").status == 403);
  CHECK(d.call("POST", base + "/reassign", as_admin, R"({"to":"luis"})").status == 200);
  CHECK(d.call("POST", base + "/release", as_luis, "{}").status == 200);

  const auto shown = d.call("GET", base, as_ana).json();
  CHECK(std::string(shown["status"].GetString()) == "open");
  REQUIRE(shown["notes"].Size() == 1);
  CHECK(std::string(shown["notes"][0]["author"].GetString()) == "luis");
  REQUIRE(shown["hand_overs"].Size() == 3);
  CHECK(std::string(shown["hand_overs"][1]["actor"].GetString()) == "admin");
  // Nothing went to the customer: the note is no outbox row.
  CHECK(d.count("SELECT count(*) FROM v_actions WHERE created_by IN ('ana', 'luis')") == 0);
  auto db = test::open_db(d.dir, store::Database::Mode::existing);
  REQUIRE(db);
  const auto check = store::verify_audit(*db);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
}
