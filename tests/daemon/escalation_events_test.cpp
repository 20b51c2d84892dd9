#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "daemon/escalation_events.h"
#include "staff/decisions.h"
#include "staff/handover.h"
#include "store/queue.h"
#include "tests/staff/escalation_fixture.h"

using namespace dispatchd;

namespace {

// A Stream that keeps what it was sent.
struct RecordingStream : daemon::Stream {
  std::string sent;
  bool is_open = true;
  bool write(std::string bytes) override {
    if (!is_open) return false;
    sent += bytes;
    return true;
  }
  bool open() const override { return is_open; }
  void close() override { is_open = false; }
};

}  // namespace

TEST_CASE("escalation events: the SSE wire format", "[events]") {
  struct Row {
    store::EscalationEvent event;
    std::string expected;
  };
  const std::vector<Row> rows = {
      {{7, true, 3, store::EscalationStatus::open, std::nullopt, store::EscalationReason::contract_failed,
        std::nullopt},
       "id: 7\nevent: escalation.created\ndata: "
       R"({"escalation_id":3,"status":"open","assignee":null,"reason":"contract_failed"})"
       "\n\n"},
      {{9, false, 3, store::EscalationStatus::claimed, "ana", store::EscalationReason::contract_failed, std::nullopt},
       "id: 9\nevent: escalation.updated\ndata: "
       R"({"escalation_id":3,"status":"claimed","assignee":"ana","reason":"contract_failed"})"
       "\n\n"},
      // A name is data, JSON-escaped: it cannot end the event or start another line.
      {{10, false, 3, store::EscalationStatus::claimed, "a\n\ndata: x", store::EscalationReason::needs_approval,
        std::nullopt},
       "id: 10\nevent: escalation.updated\ndata: "
       R"({"escalation_id":3,"status":"claimed","assignee":"a\n\ndata: x","reason":"needs_approval"})"
       "\n\n"},
  };
  for (const auto& row : rows) CHECK(daemon::sse_event(row.event) == row.expected);
  // An event read from the audit trail names the change.
  CHECK(daemon::sse_event({11, false, 3, store::EscalationStatus::claimed, "bo",
                           store::EscalationReason::contract_failed, store::AuditKind::staff_takeover}) ==
        "id: 11\nevent: escalation.updated\ndata: "
        R"({"escalation_id":3,"status":"claimed","assignee":"bo","reason":"contract_failed","change":"staff_takeover"})"
        "\n\n");
}

TEST_CASE("escalation events: hand-overs and notes reach subscribers, each naming its change", "[events]") {
  test::EscalationFixture f;
  daemon::EscalationEvents events(f.db);
  auto stream = std::make_shared<RecordingStream>();
  events.subscribe(stream, std::nullopt);
  const store::Time later = test::k_t0 + std::chrono::hours(1);
  const std::string id = std::to_string(f.escalation);
  const auto sent = [&](const std::string& status_and_assignee, const std::string& change) {
    return stream->sent.find(R"({"escalation_id":)" + id + "," + status_and_assignee +
                             R"(,"reason":"needs_approval","change":")" + change + R"("})") != std::string::npos;
  };
  REQUIRE(staff::claim(f.db, f.escalation, "luis", test::k_t0));
  REQUIRE(staff::hand_over(f.db, f.escalation, {store::HandOverKind::takeover, "ana"}, "", later,
                           std::chrono::minutes(30)));
  events.poll();
  CHECK(sent(R"("status":"claimed","assignee":"ana")", "staff_takeover"));
  REQUIRE(staff::add_note(f.db, f.escalation, "ana", "on it", later));
  REQUIRE(
      staff::hand_over(f.db, f.escalation, {store::HandOverKind::release, "ana"}, "", later, std::chrono::minutes(30)));
  events.poll();
  // Each event shows the escalation's state when it is sent: open, after the release.
  CHECK(sent(R"("status":"open","assignee":null)", "staff_note"));
  CHECK(sent(R"("status":"open","assignee":null)", "staff_release"));
}

TEST_CASE("escalation events: subscribers get changes from the audit trail, whoever made them", "[events]") {
  test::EscalationFixture f;  // one escalation, opened before anyone listens
  daemon::EscalationEvents events(f.db);
  auto stream = std::make_shared<RecordingStream>();
  events.subscribe(stream, std::nullopt);
  CHECK(stream->sent == "retry: 2000\n\n");  // what happened before is in the queue, not replayed
  events.poll();
  CHECK(stream->sent == "retry: 2000\n\n");

  // A claim (as dispatchctl or the API would), then a new escalation.
  REQUIRE(staff::claim(f.db, f.escalation, "ana", test::k_t0));
  auto message = store::insert_inbound(f.db, {"whatsapp", "wamid.2", "c2", "15550000002", "hola", "{}"}, test::k_t0);
  REQUIRE(message);
  auto second = store::open_escalation(
      f.db, {message->id, store::EscalationReason::contract_failed, "{}", std::nullopt, std::nullopt}, test::k_t0);
  REQUIRE(second);
  events.poll();
  CHECK(stream->sent.find("event: escalation.updated\ndata: {\"escalation_id\":" + std::to_string(f.escalation) +
                          ",\"status\":\"claimed\",\"assignee\":\"ana\"") != std::string::npos);
  CHECK(stream->sent.find("event: escalation.created\ndata: {\"escalation_id\":" + std::to_string(*second)) !=
        std::string::npos);
  const auto before = stream->sent.size();
  events.poll();  // nothing new: nothing sent twice
  CHECK(stream->sent.size() == before);

  SECTION("a browser that reconnects with Last-Event-ID gets what it missed") {
    auto again = std::make_shared<RecordingStream>();
    events.subscribe(again, 0);
    CHECK(again->sent.find("escalation.created") != std::string::npos);
    CHECK(again->sent.find("\"assignee\":\"ana\"") != std::string::npos);
  }
  SECTION("a closed stream is dropped") {
    stream->close();
    events.keepalive();
    CHECK(events.subscribers() == 0);
  }
}
