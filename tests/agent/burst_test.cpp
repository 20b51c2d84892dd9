// Bursts: a conversation's messages this close together answered by one decision
// (agent::Settings::burst_quiet, store/turns.h), against the fake model.
#include <catch2/catch.hpp>

#include "tests/agent/harness.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using fakes::FakeReply;
using test::AgentHarness;
using test::k_customer;
using test::send_message;

namespace {

agent::Settings bursts() {
  agent::Settings settings;
  settings.burst_quiet = 1500ms;
  settings.burst_max = 6000ms;
  return settings;
}

// Runs the loop until the fake has had `n` requests in all.
void until_requests(AgentHarness& h, std::size_t n) {
  test::run_until(h.io, [&] { return h.fake.request_count() >= n; });
}

FakeReply slow(std::string output) {
  auto reply = FakeReply::text(std::move(output));
  reply.delay = 300ms;  // long enough for a message to come meanwhile
  return reply;
}

}  // namespace

TEST_CASE("bursts: three messages 300 ms apart get one model call and one reply", "[agent][bursts]") {
  AgentHarness h(bursts());
  const auto first = h.receive("wamid.1", "hi");
  h.clock += 300ms;
  h.receive("wamid.2", "my order 1234");
  h.clock += 300ms;
  h.receive("wamid.3", "it hasn't arrived");
  h.clock += 1500ms;  // quiet since the last one
  h.fake.push(FakeReply::text(send_message(k_customer, "Order 1234 ships today.")));
  h.decide(1);
  CHECK(h.decisions[0].outcome == agent::Outcome::queued);
  CHECK(h.decisions[0].message_id == first);
  CHECK(h.decisions[0].messages == 3);
  CHECK(h.fake.request_count() == 1);
  // The model saw the three, in order, as the customer's one turn.
  const auto turn = h.turns(0).at(0).second;
  CHECK_THAT(turn, Catch::Contains("wrote 3 messages in a row"));
  CHECK_THAT(turn, Catch::Contains("message from 15551234567:\nhi\nmy order 1234\nit hasn't arrived"));
  CHECK(h.count("SELECT count(*) FROM v_actions") == 1);
  CHECK(h.count("SELECT count(*) FROM v_messages WHERE state = 'decided' AND turn_id = " + std::to_string(first)) == 3);
}

TEST_CASE("bursts: nothing is taken inside the quiet time, and the max time ends the wait", "[agent][bursts]") {
  AgentHarness h(bursts());
  h.receive("wamid.1", "hi");
  h.clock += 1000ms;
  h.agent->poke();
  // The fake clock stands still: however long the loop runs, the quiet time is not over.
  h.io.run_for(700ms);
  CHECK(h.fake.request_count() == 0);
  // Messages keep coming 900 ms apart: the turn is taken 6 s after the first.
  for (int i = 2; i <= 6; ++i) {
    h.receive("wamid." + std::to_string(i), "more " + std::to_string(i));
    h.clock += 900ms;
  }
  h.agent->poke();
  h.io.restart();
  h.io.run_for(200ms);
  CHECK(h.fake.request_count() == 0);  // 5.5 s after the first, 0.9 s after the last: not yet
  h.clock = test::k_t0 + 6000ms;       // the max time
  h.fake.push(FakeReply::text(send_message(k_customer, "Noted.")));
  h.io.restart();
  h.decide(1);
  CHECK(h.decisions[0].messages == 6);
  CHECK(h.fake.request_count() == 1);
}

TEST_CASE("bursts: a message that comes while the model decides joins the turn, and the model is asked again",
          "[agent][bursts]") {
  AgentHarness h(bursts());
  const auto first = h.receive("wamid.1", "hi");
  h.clock += 2s;
  h.fake.push(slow(send_message(k_customer, "Hello! How can I help?")));
  h.fake.push(FakeReply::text(send_message(k_customer, "Order 1234 ships today.")));
  h.agent->poke();
  until_requests(h, 1);
  h.receive("wamid.2", "where is my order 1234?");
  h.decide(1);
  CHECK(h.decisions[0].message_id == first);
  CHECK(h.decisions[0].messages == 2);
  REQUIRE(h.fake.request_count() == 2);
  const auto again = h.turns(1);
  REQUIRE(again.size() == 1);  // started over: the whole turn, no earlier answer in it
  CHECK_THAT(again[0].second, Catch::Contains("hi\nwhere is my order 1234?"));
  CHECK(h.count("SELECT count(*) FROM v_actions") == 1);
  CHECK(h.count("SELECT count(*) FROM v_actions WHERE body = 'Order 1234 ships today.'") == 1);
  CHECK(h.count("SELECT count(*) FROM v_attempts WHERE message_id = " + std::to_string(first)) == 2);
}

TEST_CASE("bursts: a turn starts over at most twice, and the next newcomer gets its own turn after the reply",
          "[agent][bursts]") {
  AgentHarness h(bursts());
  const auto first = h.receive("wamid.1", "one");
  h.clock += 2s;
  for (const char* answer : {"a1", "a2", "a3"}) h.fake.push(slow(send_message(k_customer, answer)));
  h.fake.push(FakeReply::text(send_message(k_customer, "a4")));
  h.agent->poke();
  std::int64_t fourth = 0;
  for (int i = 2; i <= 4; ++i) {
    until_requests(h, static_cast<std::size_t>(i - 1));
    const auto id = h.receive("wamid." + std::to_string(i), "msg " + std::to_string(i));
    if (i == 4) fourth = id;
  }
  h.decide(1);
  CHECK(h.decisions[0].message_id == first);
  CHECK(h.decisions[0].messages == 3);  // one, msg 2, msg 3: two restarts
  CHECK(h.count("SELECT count(*) FROM v_actions WHERE body = 'a3'") == 1);
  // msg 4 came during the last ask: it waited, and now has a turn of its own whose history
  // holds the reply on its way (queued, not sent yet).
  h.clock += 2s;
  h.decide(2);
  CHECK(h.decisions[1].message_id == fourth);
  CHECK(h.decisions[1].messages == 1);
  REQUIRE(h.fake.request_count() == 4);
  const auto own = h.turns(3).at(0).second;
  CHECK_THAT(own, Catch::Contains("[customer] msg 3\n[we replied] a3\n"));
  CHECK_THAT(own, Catch::Contains("message from 15551234567:\nmsg 4"));
}

TEST_CASE("bursts: a message whose type the configuration decides is answered on its own", "[agent][bursts]") {
  auto settings = bursts();
  settings.type_rules["whatsapp"]["sticker"] = {agent::TypeAction::ignore, ""};
  AgentHarness h(settings);
  h.receive("wamid.1", "hi");
  h.receive("wamid.2", "[sticker]", k_customer, "", "sticker");
  h.receive("wamid.3", "anyone there?");
  h.clock += 2s;
  h.fake.push(FakeReply::text(send_message(k_customer, "Hello!")));
  h.fake.push(FakeReply::text(send_message(k_customer, "Yes, here.")));
  h.decide(3);
  CHECK(h.decisions[0].messages == 1);
  CHECK(h.decisions[1].outcome == agent::Outcome::ignored);
  CHECK(h.decisions[2].messages == 1);
  CHECK(h.fake.request_count() == 2);
}
