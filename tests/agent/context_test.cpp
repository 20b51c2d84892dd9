#include <catch2/catch.hpp>

#include "agent/context.h"
#include "agent/tools.h"
#include "tests/test_util.h"

using namespace dispatchd;

TEST_CASE("context: history, then the message, tool exchanges, one failed pair", "[agent][context]") {
  const std::vector<store::HistoryEntry> history = {{"t1", false, "hola"}, {"t2", true, "¡Hola! ¿En qué te ayudo?"}};
  const std::string first = agent::first_turn(history, {"whatsapp", "15551234567", "¿Dónde está mi pedido?"});
  CHECK_THAT(first, Catch::StartsWith("Conversation so far (oldest first):\n[customer] hola\n[we replied] ¡Hola!"));
  CHECK_THAT(first, Catch::Contains("New whatsapp message from 15551234567:\n¿Dónde está mi pedido?"));
  CHECK(agent::first_turn({}, {"gmail", "a@b.c", "x"}).rfind("New gmail message", 0) == 0);

  const auto schema = llm::output_schema(test::support_en());
  const auto plain = agent::build_request("SYS", first, {}, std::nullopt, schema);
  REQUIRE(plain.turns.size() == 1);
  CHECK(plain.system == "SYS");
  const auto full = agent::build_request("SYS", first, {{"{\"action\":\"query_status\"}", "HTTP 200\nshipped"}},
                                         agent::FailedPair{"bad", "fix it"}, schema);
  REQUIRE(full.turns.size() == 5);
  CHECK(full.turns[1].role == llm::Role::assistant);
  CHECK_THAT(full.turns[2].text, Catch::Contains("HTTP 200\nshipped"));
  CHECK(full.turns[3].text == "bad");
  CHECK(full.turns[4].text == "fix it");
  CHECK(full.turns[4].role == llm::Role::user);
}

TEST_CASE("context: a failed attempt with no text adds its feedback to the last user turn", "[agent][context]") {
  const auto schema = llm::output_schema(test::support_en());
  const auto alone = agent::build_request("SYS", "the message", {}, agent::FailedPair{"", "it was blocked"}, schema);
  REQUIRE(alone.turns.size() == 1);  // no empty assistant turn: providers refuse one
  CHECK(alone.turns[0].text == "the message\n\nit was blocked");
  const auto after_tool = agent::build_request("SYS", "the message", {{"{\"action\":\"query_status\"}", "shipped"}},
                                               agent::FailedPair{"", "it was blocked"}, schema);
  REQUIRE(after_tool.turns.size() == 3);
  CHECK(after_tool.turns[2].role == llm::Role::user);
  CHECK_THAT(after_tool.turns[2].text, Catch::Contains("shipped"));
  CHECK_THAT(after_tool.turns[2].text, Catch::EndsWith("\n\nit was blocked"));
}

TEST_CASE("tools: URL placeholders are filled with percent-encoded values", "[agent][tools]") {
  CHECK(agent::percent_encode("a b&c=d/é~") == "a%20b%26c%3Dd%2F%C3%A9~");
  const catalog::Action* tool = test::support_en().find_action("query_status");
  REQUIRE(tool);
  auto url = agent::tool_url(
      *tool, R"({"action":"query_status","recipient":"+1 555","content":"ORD-1&x=2","priority":"low"})");
  REQUIRE(url);
  CHECK(*url == "http://127.0.0.1:8089/status?contact=%2B1%20555&query=ORD-1%26x%3D2");
  CHECK_FALSE(agent::tool_url(*tool, R"({"action":"query_status","recipient":null,"content":"x"})"));
}

TEST_CASE("context: the reply window, when the channel has one, is a line before the message", "[agent][context]") {
  const std::chrono::sys_seconds closes{std::chrono::seconds{1796126400}};  // 2026-12-01T12:00:00Z
  struct Row {
    ReplyWindow window;
    const char* line;
  };
  const Row rows[] = {
      {{true, closes},
       "The customer's reply window is open until 2026-12-01T12:00:00Z: free-form replies reach them "
       "until then."},
      {{false, closes},
       "The customer's reply window is closed (it closed at 2026-12-01T12:00:00Z): a free-form reply "
       "cannot reach them; only template actions can."},
      {{false, std::nullopt},
       "The customer's reply window is closed: a free-form reply cannot reach them; only "
       "template actions can."},
  };
  for (const Row& row : rows) {
    CHECK(agent::window_line(row.window) == row.line);
    const std::string first = agent::first_turn({}, {"whatsapp", "15551234567", "hola", 1, row.window});
    CHECK_THAT(first, Catch::StartsWith(std::string(row.line) + "\nNew whatsapp message from 15551234567:\nhola"));
  }
  // No window (Gmail): no line.
  CHECK_THAT(agent::first_turn({}, {"gmail", "a@b.c", "x"}), Catch::StartsWith("New gmail message"));
}
