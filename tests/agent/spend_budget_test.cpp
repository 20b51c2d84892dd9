// llm.budget in the agent, against the fake model on the store's spend counters: a closed
// budget stops model calls at once (the turn waits for the next UTC day, or escalates
// budget_exhausted), the counters outlive the agent, and the next day's start empty.
#include <catch2/catch.hpp>

#include "tests/agent/harness.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using fakes::FakeReply;
using test::AgentHarness;
using test::send_message;

namespace {

// Every call costs 1 USD: 1,000 input tokens at 1,000 USD per million, output free.
agent::Settings one_dollar_calls(agent::Budget budget) {
  agent::Settings settings;
  settings.prices["test-model"] = {.input = 1000.0, .output = 0.0};
  settings.budget = budget;
  return settings;
}

// Each model request is answered to the sender its message names (each test's senders are
// 1555000000N and the harness's customer), as a valid reply.
void answer_each_sender(AgentHarness& h, int input_tokens) {
  h.fake.set_responder([input_tokens](const fakes::ReceivedRequest& request) -> std::optional<FakeReply> {
    for (const std::string to : {"15550000001", "15550000002", "15550000003", "15550000004", test::k_customer}) {
      if (request.body.find(to) == std::string::npos) continue;
      FakeReply reply = FakeReply::text(send_message(to, "Tomorrow."));
      reply.input_tokens = input_tokens;
      return reply;
    }
    return std::nullopt;
  });
}

}  // namespace

TEST_CASE("agent: a spent daily budget stops model calls at once, across a restart, until the next UTC day",
          "[agent][budget]") {
  const agent::Settings settings = one_dollar_calls({.daily_usd = 1.5});
  AgentHarness h(settings);
  answer_each_sender(h, 1000);
  h.receive("wamid.1", "hello", "15550000001");
  h.decide(1);
  h.receive("wamid.2", "hello", "15550000002");
  h.decide(2);  // 1 USD spent before this call: still under 1.5
  CHECK(h.decisions[1].outcome == agent::Outcome::queued);
  REQUIRE(h.fake.request_count() == 2);

  const auto third = h.receive("wamid.3", "hello", "15550000003");
  h.decide(3);
  CHECK(h.decisions[2].outcome == agent::Outcome::postponed);
  CHECK(h.decisions[2].detail ==
        "daily budget spent: 2.0000 of 1.5000 USD today; model calls wait until 2026-12-01T00:00:00Z");
  CHECK(h.fake.request_count() == 2);
  CHECK(h.count("SELECT count(*) FROM v_messages WHERE state = 'processing' AND message_id = " +
                std::to_string(third)) == 1);

  // A restart: a new agent on the same database reads the same counters.
  h.agent = std::make_unique<agent::Agent>(h.io, h.db, *h.provider, h.tools, settings, [&h] { return h.clock; });
  h.agent->set_setup(agent::make_setup(test::support_en(), "You work for ACME."));
  h.agent->on_decision([&h](const agent::Decision& d) { h.decisions.push_back(d); });
  h.clock += 11h;  // 23:00 UTC, the same day
  h.receive("wamid.4", "hello", "15550000004");
  h.decide(4);
  CHECK(h.decisions[3].outcome == agent::Outcome::postponed);
  CHECK(h.fake.request_count() == 2);

  h.clock += 1h;  // 00:00 UTC: the day's counters are empty, the waiting turns are taken again
  h.decide(6);
  CHECK(h.decisions[4].outcome == agent::Outcome::queued);
  CHECK(h.decisions[5].outcome == agent::Outcome::queued);
  CHECK(h.fake.request_count() == 4);
  CHECK(h.count("SELECT count(*) FROM v_messages WHERE state = 'decided'") == 4);
}

TEST_CASE("agent: a conversation past its daily budget escalates budget_exhausted, others go on", "[agent][budget]") {
  AgentHarness h(one_dollar_calls({.conversation_daily_usd = 1.0, .when_spent = agent::WhenSpent::escalate}));
  answer_each_sender(h, 1000);
  h.receive("wamid.1", "hello");
  h.decide(1);
  CHECK(h.decisions[0].outcome == agent::Outcome::queued);
  const auto second = h.receive("wamid.2", "and again");
  h.decide(2);
  CHECK(h.decisions[1].outcome == agent::Outcome::escalated);
  CHECK(h.decisions[1].detail == "budget_exhausted");
  CHECK(h.fake.request_count() == 1);
  CHECK(h.count("SELECT count(*) FROM v_escalations WHERE reason = 'budget_exhausted' AND status = 'open'"
                " AND message_id = " +
                std::to_string(second) + " AND " + test::json_text("detail", "why") +
                " = 'conversation''s daily budget spent: 1.0000 of 1.0000 USD today; turns escalate until "
                "2026-12-01T00:00:00Z'") == 1);
  h.receive("wamid.3", "hello", "15550000004");
  h.decide(3);
  CHECK(h.decisions[2].outcome == agent::Outcome::queued);
  CHECK(h.fake.request_count() == 2);
}

TEST_CASE("agent: attempts of unknown cost close the budget unless unknown_cost is allow", "[agent][budget]") {
  const auto unknown_cost = GENERATE(agent::UnknownCost::stop, agent::UnknownCost::allow);
  agent::Settings settings;
  settings.prices["another-model"] = {.input = 1.0, .output = 1.0};  // test-model has no price
  settings.budget = {.daily_usd = 100.0, .unknown_cost = unknown_cost};
  AgentHarness h(settings);
  answer_each_sender(h, 11);
  h.receive("wamid.1", "hello");
  h.decide(1);
  h.receive("wamid.2", "hello", "15550000002");
  h.decide(2);
  if (unknown_cost == agent::UnknownCost::stop) {
    CHECK(h.decisions[1].outcome == agent::Outcome::postponed);
    CHECK(h.decisions[1].detail ==
          "daily budget unknown: 0.0000 of 100.0000 USD today (1 attempts of unknown cost); model calls wait until "
          "2026-12-01T00:00:00Z");
    CHECK(h.fake.request_count() == 1);
  } else {
    CHECK(h.decisions[1].outcome == agent::Outcome::queued);
    CHECK(h.fake.request_count() == 2);
  }
}
