#include <catch2/catch.hpp>

#include <algorithm>

#include "daemon/escalation_notifier.h"
#include "staff/targets.h"
#include "store/escalation_feed.h"
#include "store/queue.h"
#include "tests/fakes/fake_transport.h"
#include "tests/io_run.h"
#include "tests/store/escalate_fixture.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

using store::EscalationReason;
using test::k_t0;

namespace {

constexpr const char* k_hook = "http://127.0.0.1:9/hooks/T000/B000/secret";

// A EscalationNotifier over a real database and the scripted transport; its backoff timer is held
// here and fired by the test, so a retry's delay is read, never waited for.
struct NotifierFixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  boost::asio::io_context io;
  fakes::FakeTransport transport{io};
  struct Timer {
    std::chrono::milliseconds delay;
    std::move_only_function<void()> fire;
  };
  std::vector<Timer> timers;

  std::unique_ptr<daemon::EscalationNotifier> notifier() {
    auto n = std::make_unique<daemon::EscalationNotifier>(
        daemon::EscalationNotifierDeps{db, transport, [] { return k_t0 + 1h; },
                                       [this](std::chrono::milliseconds delay, std::move_only_function<void()> f) {
                                         timers.push_back({delay, std::move(f)});
                                       }},
        daemon::EscalationNotifierSettings{k_hook, "https://support.example", 2500ms});
    REQUIRE(n->start());
    return n;
  }

  std::int64_t escalate(const std::string& id, const std::string& text,
                        EscalationReason reason = EscalationReason::contract_failed) {
    return test::escalate(db, id, "5215512345678", text, reason, k_t0);
  }

  // The escalation ids of the POSTs so far, in order.
  std::vector<std::int64_t> posted() const {
    std::vector<std::int64_t> ids;
    for (const auto& r : transport.requests()) ids.push_back(test::parse_json(r.body)["escalation_id"].GetInt64());
    return ids;
  }

  std::int64_t stored_cursor() { return store::read_notify_cursor(db).value()->last_audit_id; }
  std::int64_t audit_id_of(std::int64_t escalation) {
    return test::query_int(db, "SELECT id FROM audit WHERE event = 'escalation' AND " +
                                   test::json_integer("detail", "escalation") + " = " + std::to_string(escalation))
        .value();
  }
};

}  // namespace

TEST_CASE("notifier: one POST per escalation, in order, and the cursor follows", "[notifier]") {
  NotifierFixture f;
  auto n = f.notifier();
  const auto a = f.escalate("wamid.1", "Necesito mi factura\nde octubre");
  const auto b = f.escalate("wamid.2", "¿Y mi pedido?", EscalationReason::needs_approval);
  CHECK(n->pending().value() == 2);
  f.transport.push_response(200, "ok");
  f.transport.push_response(204, "");
  n->poke();
  n->poke();  // one in flight at a time: a second poke sends nothing more
  CHECK(f.transport.requests().size() == 1);
  test::run_until(f.io, [&] { return n->stats().sent == 2; });
  CHECK(f.posted() == std::vector<std::int64_t>{a, b});
  const auto& first = f.transport.requests().front();
  CHECK(first.method == "POST");
  CHECK(first.url == k_hook);
  CHECK(first.headers.get("Content-Type") == "application/json");
  CHECK(first.timeout == 2500ms);
  const auto body = test::parse_json(first.body);
  CHECK(std::string(body["text"].GetString()) ==
        "dispatchd: escalation #" + std::to_string(a) +
            " (contract_failed) on whatsapp from 5215512345678: Necesito mi factura");
  CHECK(std::string(body["reason"].GetString()) == "contract_failed");
  CHECK(std::string(body["channel"].GetString()) == "whatsapp");
  CHECK(std::string(body["url"].GetString()) == "https://support.example/staff/#/escalations/" + std::to_string(a));
  CHECK(test::parse_json(f.transport.requests()[1].body)["reason"].GetString() == std::string("needs_approval"));
  CHECK(f.stored_cursor() == f.audit_id_of(b));
  CHECK(n->pending().value() == 0);
  CHECK(n->stats().retried == 0);
  CHECK(n->stats().failed == 0);

  // Idle: a poke reads, finds nothing, sends nothing.
  n->poke();
  f.io.poll();
  CHECK(f.transport.requests().size() == 2);
  // A later escalation goes at the next poke.
  const auto c = f.escalate("wamid.3", "hola");
  f.transport.push_response(200, "ok");
  n->poke();
  test::run_until(f.io, [&] { return n->stats().sent == 3; });
  CHECK(f.posted() == std::vector<std::int64_t>{a, b, c});
}

TEST_CASE("notifier: a 500 is sent again after the backoff and delivered once, the next ones wait", "[notifier]") {
  NotifierFixture f;
  auto n = f.notifier();
  const auto a = f.escalate("wamid.1", "factura");
  const auto b = f.escalate("wamid.2", "otra");
  f.transport.push_response(500, "oops");
  n->poke();
  test::run_until(f.io, [&] { return !f.timers.empty(); });
  CHECK(f.timers.back().delay == 1s);
  CHECK(n->stats().retried == 1);
  CHECK(f.stored_cursor() == 0);
  CHECK(n->pending().value() == 2);
  n->poke();  // waiting out the backoff: the tick's pokes send nothing
  f.io.poll();
  CHECK(f.transport.requests().size() == 1);

  SECTION("a second failure doubles the wait; Retry-After is honoured") {
    f.transport.push_response(503, "busy", {{"Retry-After", "30"}});
    f.timers.back().fire();
    test::run_until(f.io, [&] { return f.timers.size() == 2; });
    CHECK(f.timers.back().delay == 30s);
    f.transport.push_error(net::TransportErrorKind::connect_failed, "refused");
    f.timers.back().fire();
    test::run_until(f.io, [&] { return f.timers.size() == 3; });
    CHECK(f.timers.back().delay == 4s);  // the third failure in a row
    CHECK(n->stats().retried == 3);
  }
  f.transport.push_response(200, "ok");
  f.transport.push_response(200, "ok");
  f.timers.back().fire();
  test::run_until(f.io, [&] { return n->stats().sent == 2; });
  const auto posted = f.posted();
  CHECK(std::count(posted.begin(), posted.end(), a) == static_cast<long>(posted.size()) - 1);  // retried, then once
  CHECK(posted.back() == b);
  CHECK(f.stored_cursor() == f.audit_id_of(b));

  SECTION("after a success the backoff starts again at 1 s") {
    f.escalate("wamid.3", "x");
    f.transport.push_response(502, "");
    const auto timers = f.timers.size();
    n->poke();
    test::run_until(f.io, [&] { return f.timers.size() == timers + 1; });
    CHECK(f.timers.back().delay == 1s);
  }
}

TEST_CASE("notifier: a 400 is refused for good, counted failed and the next one goes", "[notifier]") {
  NotifierFixture f;
  auto n = f.notifier();
  const auto a = f.escalate("wamid.1", "uno");
  const auto b = f.escalate("wamid.2", "dos");
  f.transport.push_response(400, "invalid_payload");
  f.transport.push_response(200, "ok");
  n->poke();
  test::run_until(f.io, [&] { return n->stats().sent == 1; });
  CHECK(f.posted() == std::vector<std::int64_t>{a, b});
  CHECK(n->stats().failed == 1);
  CHECK(n->stats().retried == 0);
  CHECK(f.timers.empty());
  CHECK(f.stored_cursor() == f.audit_id_of(b));
  CHECK(n->pending().value() == 0);
}

TEST_CASE("notifier: a restart resumes after the cursor, an abandoned POST is sent again", "[notifier]") {
  NotifierFixture f;
  const auto old = f.escalate("wamid.0", "before the first start");
  auto first = f.notifier();
  CHECK(first->pending().value() == 0);  // the first start does not announce history
  const auto a = f.escalate("wamid.1", "uno");
  f.transport.push_response(200, "ok");
  first->poke();
  test::run_until(f.io, [&] { return first->stats().sent == 1; });
  const auto b = f.escalate("wamid.2", "dos");
  f.transport.push_response(200, "ok");  // answered, but after stop(): abandoned
  first->poke();
  CHECK(f.transport.requests().size() == 2);
  first->stop();
  f.io.poll();
  CHECK(first->stats().sent == 1);
  CHECK(f.stored_cursor() == f.audit_id_of(a));
  first.reset();

  const auto c = f.escalate("wamid.3", "tres");
  auto second = f.notifier();
  CHECK(second->pending().value() == 2);
  f.transport.push_response(200, "ok");
  f.transport.push_response(200, "ok");
  second->poke();
  test::run_until(f.io, [&] { return second->stats().sent == 2; });
  CHECK(f.posted() == std::vector<std::int64_t>{a, b, b, c});
  CHECK(std::ranges::count(f.posted(), old) == 0);
  CHECK(f.stored_cursor() == f.audit_id_of(c));
}

TEST_CASE("notifier: a notifier destroyed with a POST or a backoff pending ignores their callbacks", "[notifier]") {
  NotifierFixture f;
  auto n = f.notifier();
  f.escalate("wamid.1", "uno");
  f.transport.push_response(500, "");
  n->poke();
  test::run_until(f.io, [&] { return !f.timers.empty(); });
  n.reset();
  f.timers.back().fire();  // would poke a destroyed notifier
  f.io.poll();
  CHECK(f.transport.requests().size() == 1);
}

TEST_CASE("notifier: a case past its response target is notified once, and not again after a restart",
          "[notifier][targets]") {
  NotifierFixture f;
  auto n = f.notifier();
  const auto a = f.escalate("wamid.1", "Necesito mi factura");
  const auto b = f.escalate("wamid.2", "otra");
  f.transport.push_response(200, "ok");
  f.transport.push_response(200, "ok");
  n->poke();
  test::run_until(f.io, [&] { return n->stats().sent == 2; });

  // b is claimed in time: its clock stops, it never breaches.
  REQUIRE(store::claim_escalation(f.db, b, "ana", k_t0 + 10min));
  const staff::ResponseTargets targets;  // 60 minutes for every reason
  auto open = store::open_clocks(f.db);
  REQUIRE(open);
  CHECK(staff::find_breaches(*open, targets, k_t0 + 59min).unnoticed.empty());
  const auto found = staff::find_breaches(*open, targets, k_t0 + 61min);
  REQUIRE(found.unnoticed.size() == 1);
  CHECK(found.unnoticed.front().escalation_id == a);
  CHECK(found.unnoticed.front().due_at == k_t0 + 60min);
  CHECK(store::notice_breach(f.db, a, k_t0 + 60min, k_t0 + 61min).value());
  // A second check (this instance's next tick, or another instance's) records nothing more.
  CHECK_FALSE(store::notice_breach(f.db, a, k_t0 + 60min, k_t0 + 62min).value());
  CHECK_FALSE(store::notice_breach(f.db, b, k_t0 + 60min, k_t0 + 62min).value());  // claimed: not open
  open = store::open_clocks(f.db);
  REQUIRE(open);
  REQUIRE(open->size() == 1);
  CHECK(open->front().breach_noticed);
  CHECK(staff::find_breaches(*open, targets, k_t0 + 90min).unnoticed.empty());
  CHECK(staff::find_breaches(*open, targets, k_t0 + 90min).overdue.at(0) == 1);  // contract_failed

  CHECK(n->pending().value() == 1);
  f.transport.push_response(200, "ok");
  n->poke();
  test::run_until(f.io, [&] { return n->stats().sent == 3; });
  const auto body = test::parse_json(f.transport.requests().back().body);
  CHECK(body["escalation_id"].GetInt64() == a);
  CHECK(std::string(body["event"].GetString()) == "breached");
  CHECK(std::string(body["text"].GetString()).find("past its response target") != std::string::npos);
  CHECK(test::parse_json(f.transport.requests().front().body)["event"].GetString() == std::string("opened"));

  // A restart reads the stored cursor: nothing is sent again.
  n.reset();
  auto again = f.notifier();
  CHECK(again->pending().value() == 0);
  again->poke();
  f.io.poll();
  CHECK(f.transport.requests().size() == 3);
}
