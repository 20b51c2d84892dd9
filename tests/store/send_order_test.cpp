// Sends to one counterpart leave in order (store::begin_send): a reply is not claimed while
// one queued before it to the same recipient on the same channel is 'approved' or
// 'sending'. Other counterparts, the same number on another channel and tool calls are not
// held back; a proposal staff approve is queued behind the holding reply sent meanwhile.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "store/outbox.h"
#include "store/queue.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using test::k_t0;

namespace {

constexpr const char* k_order_customer = "15551234567";

struct SendOrderFixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  int messages = 0;

  // A message from `from` on `channel`, taken by a worker.
  std::int64_t taken(const std::string& from = k_order_customer, const std::string& channel = "whatsapp") {
    const std::string id = "in." + std::to_string(++messages);
    auto message = store::insert_inbound(db, {channel, id, channel + "." + from, from, "hola", "{}"}, k_t0);
    REQUIRE(message);
    auto lease = store::take_next(db, "w", k_t0, 60s);
    REQUIRE(lease.value());
    REQUIRE((*lease)->id == message->id);
    return message->id;
  }
  static store::NewAction reply(std::int64_t message_id, const std::string& to, const std::string& text) {
    return {.message_id = message_id, .action = "send_message", .arguments = "{}", .recipient = to, .body = text};
  }
  // The agent's reply to a new message from `to` on `channel`.
  std::int64_t queue(const std::string& text, const std::string& to = k_order_customer,
                     const std::string& channel = "whatsapp") {
    auto id = store::queue_reply(db, reply(taken(to, channel), to, text), k_t0);
    REQUIRE(id);
    return *id;
  }
  // The id begin_send claims on `lane`, 0 for none.
  std::int64_t claim(const std::string& lane = "whatsapp") {
    auto item = store::begin_send(db, k_t0, lane);
    REQUIRE(item);
    return *item ? (*item)->id : 0;
  }
};

// How the send that went first ends.
using FirstOutcome = std::function<void(store::Database&, const store::OutboxItem&)>;

}  // namespace

TEST_CASE("send order: a reply waits until the one queued before it to the same counterpart has an outcome",
          "[outbox]") {
  struct Row {
    const char* what;
    FirstOutcome end;
  };
  const std::vector<Row> table{
      {"sent", [](store::Database& db,
                  const store::OutboxItem& sent) { REQUIRE(store::complete_send(db, sent.id, "wamid.1", k_t0)); }},
      {"failed", [](store::Database& db,
                    const store::OutboxItem& sent) { REQUIRE(store::fail_send(db, sent.id, "refused", k_t0)); }},
      {"unknown: its request left first, staff resolve it later",
       [](store::Database& db, const store::OutboxItem& sent) {
         REQUIRE(store::unknown_send(db, sent.id, "timed out", k_t0));
       }},
      {"confirmed by a delivery report while sending",
       [](store::Database& db, const store::OutboxItem& sent) {
         REQUIRE(store::apply_delivery(db, {"", sent.idempotency_key, store::DeliveryStatus::delivered, ""}, k_t0)
                     .value()
                     .action_id == sent.id);
       }},
  };
  for (const auto& row : table) {
    SECTION(row.what) {
      SendOrderFixture f;
      const auto first = f.queue("one moment please");
      const auto second = f.queue("your order ships tomorrow");
      auto item = store::begin_send(f.db, k_t0, "whatsapp");
      REQUIRE(item.value());
      CHECK((*item)->id == first);  // the older, though both are approved
      CHECK(f.claim() == 0);        // the second waits while the first is sending
      row.end(f.db, **item);
      CHECK(f.claim() == second);
      CHECK(f.claim() == 0);
    }
  }
}

TEST_CASE("send order: a retried send keeps its place, the next waits behind it", "[outbox]") {
  SendOrderFixture f;
  const auto first = f.queue("one");
  const auto second = f.queue("two");
  const auto third = f.queue("three");
  REQUIRE(f.claim() == first);
  // Twice refused before it left (a rate limit, a refused connection): back to 'approved',
  // still ahead of the two queued after it.
  for (int i = 0; i < 2; ++i) {
    REQUIRE(store::retry_send(f.db, first, "rate limit", k_t0));
    CHECK(f.claim() == first);
    CHECK(f.claim() == 0);
  }
  REQUIRE(store::complete_send(f.db, first, "wamid.1", k_t0));
  CHECK(f.claim() == second);
  CHECK(f.claim() == 0);
  REQUIRE(store::complete_send(f.db, second, "wamid.2", k_t0));
  CHECK(f.claim() == third);
}

TEST_CASE("send order: only the same recipient on the same channel waits", "[outbox]") {
  struct Row {
    const char* what;
    std::string channel;
    std::string to;
    bool waits;
  };
  const std::vector<Row> table{
      {"the same recipient on the same channel", "whatsapp", k_order_customer, true},
      {"another recipient on the same channel", "whatsapp", "15557654321", false},
      {"the same address on another channel", "gmail", k_order_customer, false},
  };
  for (const auto& row : table) {
    SECTION(row.what) {
      SendOrderFixture f;
      const auto first = f.queue("one");
      REQUIRE(f.claim() == first);
      const auto next = f.queue("two", row.to, row.channel);
      CHECK(f.claim(row.channel) == (row.waits ? 0 : next));
    }
  }
}

TEST_CASE("send order: tool calls neither wait for nor hold back the replies to their customer", "[outbox][mcp]") {
  SendOrderFixture f;
  const auto tool = [&](std::int64_t message_id) {
    auto id = store::queue_reply(f.db,
                                 store::with_tool(SendOrderFixture::reply(message_id, k_order_customer, "{}"),
                                                  "bookings", "create_booking", "{}", std::string("Booked.")),
                                 k_t0);
    REQUIRE(id);
    return *id;
  };
  const std::string tools(store::k_tool_lane);
  // A reply in flight: a tool call queued after it for the same customer still goes.
  const auto reply = f.queue("one moment");
  REQUIRE(f.claim() == reply);
  const auto call = tool(f.taken());
  CHECK(f.claim(tools) == call);
  // A tool call in flight holds back no reply queued after it: once the reply before it has
  // its outcome, the next one goes.
  const auto later = f.queue("anything else?");
  CHECK(f.claim() == 0);
  REQUIRE(store::complete_send(f.db, reply, "wamid.1", k_t0));
  CHECK(f.claim() == later);
  // The tool's follow-up is queued as it answers, behind the reply still in flight.
  REQUIRE(store::complete_send(f.db, call, "", k_t0));
  CHECK(f.claim() == 0);
  REQUIRE(store::complete_send(f.db, later, "wamid.2", k_t0));
  const auto follow_up = f.claim();
  CHECK(test::query_int(f.db, "SELECT count(*) FROM actions WHERE id = " + std::to_string(follow_up) +
                                  " AND body = 'Booked.' AND tool_server IS NULL")
            .value() == 1);
}

TEST_CASE("send order: the holding reply leaves before staff's answer to the escalation", "[outbox][queue]") {
  struct Row {
    const char* what;
    std::function<std::int64_t(store::Database&, std::int64_t escalation, std::int64_t message)> answer;
  };
  const std::vector<Row> table{
      // The proposal was stored before the holding reply (a smaller id), yet is queued when approved.
      {"staff approve the proposal",
       [](store::Database& db, std::int64_t escalation, std::int64_t) {
         return store::approve_escalation(db, escalation, "ana", k_t0).value();
       }},
      {"staff reply in their own words",
       [](store::Database& db, std::int64_t escalation, std::int64_t message) {
         return store::resolve_with_action(db, escalation, "ana",
                                           SendOrderFixture::reply(message, k_order_customer, "It ships today."),
                                           store::Resolution::replied, k_t0)
             .value();
       }},
  };
  for (const auto& row : table) {
    for (const bool retried : {false, true}) {
      SECTION(std::string(row.what) + (retried ? ", the holding reply retried first" : "")) {
        SendOrderFixture f;
        const auto message = f.taken();
        const auto escalation = store::escalate_message(
            f.db,
            {message, store::EscalationReason::model_escalated, "{}", R"({"action":"send_message"})",
             SendOrderFixture::reply(message, k_order_customer, "It ships tomorrow.")},
            SendOrderFixture::reply(message, k_order_customer, "A colleague will answer shortly."), k_t0);
        REQUIRE(escalation);
        const auto holding =
            test::query_int(f.db, "SELECT id FROM actions WHERE action = 'send_message' AND status = 'approved'")
                .value();
        if (retried) {
          REQUIRE(f.claim() == holding);
          REQUIRE(store::retry_send(f.db, holding, "rate limit", k_t0));
        }
        // Staff answer before the holding reply has left.
        const auto answer = row.answer(f.db, *escalation, message);
        CHECK(f.claim() == holding);
        CHECK(f.claim() == 0);
        REQUIRE(store::complete_send(f.db, holding, "wamid.holding", k_t0));
        CHECK(f.claim() == answer);
      }
    }
  }
}

TEST_CASE("send order: replies queued to three customers leave each customer's in order", "[outbox]") {
  SendOrderFixture f;
  const std::vector<std::string> customers{"15550000001", "15550000002", "15550000003"};
  std::map<std::string, std::vector<std::int64_t>> queued;
  for (int i = 0; i < 12; ++i) {
    const auto& to = customers[static_cast<std::size_t>(i * 7 % 3)];
    queued[to].push_back(f.queue("reply " + std::to_string(i), to));
  }
  // Each round claims everything that may leave, then all of it is sent.
  std::map<std::string, std::vector<std::int64_t>> left;
  while (true) {
    std::vector<store::OutboxItem> round;
    while (auto item = store::begin_send(f.db, k_t0, "whatsapp").value()) round.push_back(*item);
    if (round.empty()) break;
    std::set<std::string> recipients;
    for (const auto& item : round) recipients.insert(item.recipient);
    CHECK(recipients.size() == round.size());  // one per customer at a time
    CHECK(round.size() == customers.size());   // and every customer's next at once
    for (const auto& item : round) {
      left[item.recipient].push_back(item.id);
      REQUIRE(store::complete_send(f.db, item.id, "out." + std::to_string(item.id), k_t0));
    }
  }
  CHECK(left == queued);
}
