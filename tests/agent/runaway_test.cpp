// agent::check_runaway (agent/runaway.h), row by row of its table.
#include <catch2/catch.hpp>

#include "agent/runaway.h"
#include "store/queue.h"
#include "tests/agent/harness.h"
#include "tests/store/store_fixture.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using agent::Runaway;

namespace {

const store::Instant k_now = store::Instant(test::k_t0) + 24h;

// A conversation of `n` exchanges ending `gap` before now: the counterpart writes `text`
// (numbered unless `same`), we answer `reply_after` later.
agent::Activity exchanges(int n, std::chrono::milliseconds every, std::chrono::milliseconds reply_after,
                          std::chrono::milliseconds answer_after, const std::string& text, bool same) {
  agent::Activity past;
  store::Instant at = k_now - every * n;
  for (int i = 0; i < n; ++i) {
    past.turns.push_back({at, same ? text : text + " " + std::to_string(i)});
    past.replies.push_back(
        {at + reply_after, "Reply number " + std::to_string(i) + " with the details you asked", past.turns.size() - 1});
    at += every;
  }
  past.arrived = past.replies.empty() ? k_now : past.replies.back().sent + answer_after;
  return past;
}

}  // namespace

TEST_CASE("runaway: normalised text ignores case, spaces and punctuation", "[runaway]") {
  CHECK(agent::normalised("Thank you for your message!!") == "thank you for your message");
  CHECK(agent::normalised("  thank   YOU, for your message ") == "thank you for your message");
  CHECK(agent::normalised("¿Dónde?") ==
        "\xc2\xbf"
        "d\xc3\xb3nde");  // letters of other scripts kept as they are
  CHECK(agent::normalised("...") == "");
}

TEST_CASE("runaway: each check of the table, and a person writing normally", "[runaway]") {
  const agent::RunawayLimits limits;  // 10 in 10 minutes, 50 a day, 3 repeats, 4 quick answers within 2 s
  const std::string bot = "Thank you for your message, an agent will reply soon";
  struct Row {
    const char* name;
    agent::Activity past;
    std::string turn;
    Runaway verdict;
  };
  auto echo = exchanges(1, 60s, 5s, 30s, "hello", false);
  const Row rows[] = {
      {"a first message", agent::Activity{{}, {}, k_now}, "hello", Runaway::answer},
      {"a person: 5 exchanges a minute apart, answers after 30 s", exchanges(5, 60s, 5s, 30s, "question", false),
       "another question", Runaway::answer},
      {"a person who says thanks twice", exchanges(2, 60s, 5s, 30s, "thanks", true), "something else", Runaway::answer},
      {"the same text a third time", exchanges(2, 60s, 5s, 30s, bot, true), bot, Runaway::suspected_loop},
      {"the same text, only twice", exchanges(1, 60s, 5s, 30s, bot, true), bot, Runaway::answer},
      {"our reply echoed back", echo, "reply number 0 with the details you asked!", Runaway::suspected_loop},
      {"a short echo is a person's", agent::Activity{{{k_now - 60s, "hi"}}, {{k_now - 50s, "Ok", 0}}, k_now}, "ok",
       Runaway::answer},
      {"answers 0.2 s after each of our last 4 replies", exchanges(4, 1200ms, 1s, 200ms, "msg", false), "msg x",
       Runaway::suspected_loop},
      {"a person 3 s after each reply, our send times a second coarse",
       exchanges(4, 3300ms, -300ms, 3300ms, "msg", false), "msg x", Runaway::answer},
      {"only 3 quick answers", exchanges(3, 1200ms, 1s, 200ms, "msg", false), "msg x", Runaway::answer},
      {"4 answers, the last one slow", exchanges(4, 1200ms, 1s, 200ms, "msg", false), "msg x", Runaway::answer},
      {"10 replies in 10 minutes", exchanges(10, 50s, 5s, 40s, "question", false), "more", Runaway::conversation_limit},
      {"9 replies in 10 minutes", exchanges(9, 50s, 5s, 40s, "question", false), "more", Runaway::answer},
      {"50 replies in a day, few of them lately", exchanges(50, 20min, 5s, 40s, "question", false), "more",
       Runaway::conversation_limit},
  };
  for (auto row : rows) {
    CAPTURE(row.name);
    if (std::string(row.name) == "4 answers, the last one slow") row.past.arrived = row.past.replies.back().sent + 30s;
    const auto verdict = agent::check_runaway(row.past, row.turn, k_now, limits);
    CHECK(verdict.verdict == row.verdict);
    CHECK(verdict.why.empty() == (row.verdict == Runaway::answer));
  }
}

TEST_CASE("runaway: a check set to 0 is off", "[runaway]") {
  const agent::RunawayLimits off{0, 0, 0, 0, 2000ms};
  const std::string bot = "Thank you for your message, an agent will reply soon";
  CHECK(agent::check_runaway(exchanges(60, 5s, 1s, 200ms, bot, true), "x", k_now, off).verdict == Runaway::answer);
  // The echo check has no switch of its own: it is a loop whatever the limits.
  auto echo = exchanges(1, 60s, 5s, 30s, "hello", false);
  CHECK(agent::check_runaway(echo, "Reply number 0 with the details you asked", k_now, off).verdict ==
        Runaway::suspected_loop);
}

TEST_CASE("runaway: a loop escalates once and holds the conversation until staff close it", "[agent][runaway]") {
  agent::Settings settings;
  settings.runaway = agent::RunawayLimits{};
  test::AgentHarness h(settings);
  const std::string bot = "Thank you for your message, an agent will reply soon";
  h.fake.set_fallback(fakes::FakeReply::text(test::send_message(test::k_customer, "We are on it.")));
  for (int i = 1; i <= 2; ++i) {
    h.receive("wamid." + std::to_string(i), bot);
    h.clock += std::chrono::seconds(30);
    h.decide(static_cast<std::size_t>(i));
    CHECK(h.decisions.back().outcome == agent::Outcome::queued);
  }
  // The third time the same text: a loop, no model call, no holding reply.
  const auto third = h.receive("wamid.3", bot);
  h.decide(3);
  CHECK(h.decisions.back().outcome == agent::Outcome::escalated);
  CHECK(h.fake.request_count() == 2);
  CHECK(h.count("SELECT count(*) FROM v_escalations WHERE reason = 'suspected_loop' AND message_id = " +
                std::to_string(third)) == 1);
  CHECK(h.count("SELECT count(*) FROM v_actions") == 2);
  // Held: the next messages are stored and done, without the model.
  h.receive("wamid.4", "are you there?");
  h.decide(4);
  CHECK(h.decisions.back().outcome == agent::Outcome::ignored);
  CHECK_THAT(h.decisions.back().detail, Catch::Contains("held by escalation"));
  CHECK(h.fake.request_count() == 2);
  // Staff close the escalation: the conversation is answered again.
  const auto escalation = h.count("SELECT escalation_id FROM v_escalations WHERE reason = 'suspected_loop'");
  REQUIRE(store::close_escalation(h.db, escalation, "ana", store::EscalationStatus::dismissed, "a bot; blocked",
                                  store::whole_seconds(h.clock)));
  CHECK(h.count("SELECT count(*) FROM conversation_holds") == 0);
  h.receive("wamid.5", "Hi, a person here: where is my order?");
  h.decide(5);
  CHECK(h.decisions.back().outcome == agent::Outcome::queued);
  CHECK(h.fake.request_count() == 3);
}
