#include <catch2/catch.hpp>

#include "store/attempts.h"
#include "store/audit.h"
#include "store/outbox.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using test::k_t0;

namespace {

struct OutboxFixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  std::int64_t message_id = 0;

  OutboxFixture() {
    auto message =
        store::insert_inbound(db, {"whatsapp", "wamid.1", "c", "15551234567", "where is my order", "{}"}, k_t0);
    REQUIRE(message);
    message_id = message->id;
  }

  std::int64_t add_reply(const std::string& text) {
    auto id = store::add_action(db,
                                {.message_id = message_id,
                                 .action = "send_message",
                                 .arguments = R"({"action":"send_message"})",
                                 .recipient = "15551234567",
                                 .body = text},
                                k_t0);
    REQUIRE(id);
    return *id;
  }

  std::int64_t count(const std::string& where) {
    return test::query_int(db, "SELECT count(*) FROM v_actions WHERE " + where).value();
  }
};

}  // namespace

TEST_CASE("outbox: approved -> sending is committed before the provider call", "[outbox]") {
  OutboxFixture f;
  const auto id = f.add_reply("It ships tomorrow.");
  auto item = store::begin_send(f.db, k_t0 + 1s);
  REQUIRE(item);
  REQUIRE(*item);
  CHECK((*item)->id == id);
  CHECK((*item)->channel == "whatsapp");
  CHECK((*item)->recipient == "15551234567");
  CHECK((*item)->body == "It ships tomorrow.");
  CHECK((*item)->idempotency_key == "dispatchd-" + std::to_string(f.message_id) + "-1");
  // Another connection (a crash right now would leave this) already sees 'sending'.
  auto reader = test::open_db(f.dir, store::Database::Mode::existing);
  REQUIRE(reader);
  CHECK(test::query_int(*reader, "SELECT count(*) FROM v_actions WHERE status = 'sending'").value() == 1);
  CHECK_FALSE(store::begin_send(f.db, k_t0 + 2s).value());  // taken once
  REQUIRE(store::complete_send(f.db, id, "wamid.OUT", k_t0 + 3s));
  CHECK(f.count("status = 'sent' AND provider_message_id = 'wamid.OUT'") == 1);
  auto twice = store::complete_send(f.db, id, "wamid.OUT", k_t0 + 4s);
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message == "action " + std::to_string(id) + " is sent, not sending");
}

TEST_CASE("outbox: idempotency keys are unique per action of a message", "[outbox]") {
  OutboxFixture f;
  f.add_reply("one");
  f.add_reply("two");
  CHECK(test::query_int(f.db, "SELECT count(DISTINCT idempotency_key) FROM v_actions").value() == 2);
}

TEST_CASE("outbox: a call that never left goes back in line, a refused one escalates", "[outbox]") {
  OutboxFixture f;
  const auto id = f.add_reply("hi");
  REQUIRE(store::begin_send(f.db, k_t0).value());
  REQUIRE(store::retry_send(f.db, id, "connection refused", k_t0 + 1s));
  CHECK(f.count("status = 'approved' AND error = 'connection refused'") == 1);
  REQUIRE(store::begin_send(f.db, k_t0 + 2s).value());
  auto escalation = store::fail_send(f.db, id, "(#131026) Message undeliverable", k_t0 + 3s);
  REQUIRE(escalation);
  CHECK(f.count("status = 'failed'") == 1);
  CHECK(test::query_int(f.db,
                        "SELECT count(*) FROM v_escalations WHERE reason = 'send_failed' AND status = 'open'"
                        " AND " +
                            test::json_text("detail", "error") + " = '(#131026) Message undeliverable'")
            .value() == 1);
  CHECK(store::verify_audit(f.db)->first_broken == std::nullopt);
}

TEST_CASE("outbox: a send refused because the reply window closed escalates window_closed with the reply", "[outbox]") {
  OutboxFixture f;
  const auto id = f.add_reply("It ships tomorrow.");
  REQUIRE(store::begin_send(f.db, k_t0).value());
  auto escalation =
      store::fail_send(f.db, id, "(#131047) Re-engagement message", k_t0 + 1s, store::SendFailure::window_closed);
  REQUIRE(escalation);
  CHECK(f.count("status = 'failed'") == 1);
  CHECK(test::query_int(f.db,
                        "SELECT count(*) FROM v_escalations WHERE reason = 'window_closed' AND status = 'open'"
                        " AND proposed_action = '{\"action\":\"send_message\"}' AND escalation_id = " +
                            std::to_string(*escalation))
            .value() == 1);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_escalations WHERE reason = 'send_failed'").value() == 0);
}

TEST_CASE("outbox: after a crash mid-send the action is unknown, escalated and never resent", "[outbox]") {
  OutboxFixture f;
  const auto sent = f.add_reply("already delivered");
  const auto waiting = f.add_reply("still waiting");
  REQUIRE(store::begin_send(f.db, k_t0).value());
  // The process dies here; the next start recovers.
  auto recovered = store::recover_sending(f.db, k_t0 + 60s);
  REQUIRE(recovered);
  CHECK(*recovered == std::vector<std::int64_t>{sent});
  CHECK(f.count("status = 'unknown' AND action_id = " + std::to_string(sent)) == 1);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_escalations WHERE reason = 'delivery_unknown'").value() == 1);
  auto next = store::begin_send(f.db, k_t0 + 61s);
  REQUIRE(next);
  REQUIRE(*next);
  CHECK((*next)->id == waiting);  // the unknown one is not taken again
}

TEST_CASE("attempts: recorded with their audit event, counted per message, never twice", "[attempts]") {
  OutboxFixture f;
  store::AttemptRecord attempt{.message_id = f.message_id,
                               .attempt = 1,
                               .provider = "openai",
                               .model = "gpt-4o-mini",
                               .request_summary = R"({"turns":2})",
                               .raw_output = R"({"action":"reply"})",
                               .verdict = store::Verdict::invalid,
                               .errors = R"([{"path":"/action","code":"enum","message":"..."}])",
                               .error_class = "enum",
                               .latency_ms = 812,
                               .input_tokens = 420,
                               .output_tokens = 31,
                               .finish_reason = "stop"};
  REQUIRE(store::record_attempt(f.db, attempt, k_t0 + 1s));
  CHECK(store::count_attempts(f.db, f.message_id).value().total == 1);
  CHECK(store::count_attempts(f.db, f.message_id).value().failed == 1);
  CHECK_FALSE(store::record_attempt(f.db, attempt, k_t0 + 2s));  // same attempt number
  attempt.attempt = 2;
  attempt.verdict = store::Verdict::valid;
  attempt.error_class.reset();
  REQUIRE(store::record_attempt(f.db, attempt, k_t0 + 2s));
  const auto counts = store::count_attempts(f.db, f.message_id).value();
  CHECK(counts.total == 2);
  CHECK(counts.failed == 1);
  CHECK(counts.last_verdict == store::Verdict::valid);
  CHECK(counts.last_raw_output == R"({"action":"reply"})");
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_attempts WHERE error_class = 'enum' AND latency_ms = 812")
            .value() == 1);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_audit WHERE event = 'attempt'").value() == 2);
}

TEST_CASE("outbox: a decided message is done with its send's outcome", "[outbox]") {
  OutboxFixture f;
  auto second = store::insert_inbound(f.db, {"whatsapp", "wamid.2", "d", "15557654321", "hi", "{}"}, k_t0);
  REQUIRE(second);
  REQUIRE(store::take_next(f.db, "w", k_t0, 60s).value());
  REQUIRE(store::take_next(f.db, "w", k_t0, 60s).value());
  const auto sent = f.add_reply("first");
  REQUIRE(store::decide(f.db, f.message_id, k_t0));
  auto failing = store::add_action(f.db,
                                   {.message_id = second->id,
                                    .action = "send_message",
                                    .arguments = "{}",
                                    .recipient = "15557654321",
                                    .body = "second"},
                                   k_t0);
  REQUIRE(failing);
  REQUIRE(store::decide(f.db, second->id, k_t0));
  REQUIRE(store::begin_send(f.db, k_t0 + 1s).value());
  REQUIRE(store::complete_send(f.db, sent, "wamid.OUT", k_t0 + 2s));
  REQUIRE(store::begin_send(f.db, k_t0 + 3s).value());
  REQUIRE(store::fail_send(f.db, *failing, "(#131047) window closed", k_t0 + 4s));
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_messages WHERE state = 'done' AND outcome = 'replied'").value() ==
        1);
  CHECK(
      test::query_int(f.db, "SELECT count(*) FROM v_messages WHERE state = 'done' AND outcome = 'escalated'").value() ==
      1);
}

TEST_CASE("outbox: delivery reports confirm an unknown send or fail a sent one", "[outbox]") {
  OutboxFixture f;
  const auto first = f.add_reply("one");
  const auto second = f.add_reply("two");
  REQUIRE(store::begin_send(f.db, k_t0).value());
  REQUIRE(store::complete_send(f.db, first, "wamid.ONE", k_t0 + 1s));
  REQUIRE(store::begin_send(f.db, k_t0 + 2s).value());
  REQUIRE(store::unknown_send(f.db, second, "timed out after the request left", k_t0 + 3s));
  // The status webhook of the unknown one names our idempotency key as its tracker.
  auto confirmed = store::apply_delivery(
      f.db, {"wamid.TWO", "dispatchd-" + std::to_string(f.message_id) + "-2", store::DeliveryStatus::delivered, ""},
      k_t0 + 4s);
  REQUIRE(confirmed);
  CHECK(confirmed->action_id == second);
  CHECK(f.count("status = 'sent' AND provider_message_id = 'wamid.TWO'") == 1);
  // A later failure of the first one.
  auto failed = store::apply_delivery(f.db, {"wamid.ONE", "", store::DeliveryStatus::failed, "(#131047) re-engagement"},
                                      k_t0 + 5s);
  REQUIRE(failed);
  CHECK(failed->escalation_id.has_value());
  CHECK(f.count("status = 'failed' AND action_id = " + std::to_string(first)) == 1);
  // Not ours: nothing happens, nothing fails.
  auto foreign = store::apply_delivery(f.db, {"wamid.OTHER", "", store::DeliveryStatus::read, ""}, k_t0 + 6s);
  REQUIRE(foreign);
  CHECK_FALSE(foreign->action_id);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_audit WHERE event = 'delivery'").value() == 2);
}
