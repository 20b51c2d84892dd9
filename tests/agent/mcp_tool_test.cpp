// Catalog actions of kind mcp with use lookup, through the agent loop: the validated fields
// go to the tool as its arguments (renamed as the catalog says), its answer goes back to the
// model, and every call is recorded (v_tool_calls, the audit), http tools' too. The MCP
// servers are a fake mcp::ToolCaller here; tests/mcp/fleet_test.cpp has the real ones.
#include <catch2/catch.hpp>

#include <deque>

#include "agent/tools.h"
#include "mcp/fleet.h"
#include "tests/agent/harness.h"

using namespace dispatchd;
using namespace dispatchd::test;

namespace {

const catalog::Catalog& lookup_catalog() {
  static const catalog::Catalog catalog = [] {
    auto parsed = catalog::Catalog::parse(R"({
      "name": "mcp.test", "action_field": "action",
      "fields": {
        "recipient": {"type": "string", "minLength": 1},
        "content": {"type": "string", "minLength": 1},
        "order_id": {"type": "string", "pattern": "^ORD-[0-9]+$"},
        "detail": {"type": "boolean"}
      },
      "actions": [
        {"name": "send_message", "description": "Reply.", "kind": "reply", "text_field": "content",
         "required": ["recipient", "content"], "policy": {"recipient_field": "recipient"}},
        {"name": "lookup_order", "description": "Look an order up.", "kind": "mcp",
         "required": ["order_id"], "optional": ["detail"],
         "mcp": {"server": "orders", "tool": "get_order", "use": "lookup", "arguments": {"order_id": "id"}}}
      ]})",
                                          "mcp.json");
    if (!parsed) throw std::runtime_error(parsed.error().front().to_string());
    return std::move(*parsed);
  }();
  return catalog;
}

// Answers each call with the next scripted result, and keeps what it was asked.
struct FakeCaller : mcp::ToolCaller {
  boost::asio::io_context& io;
  std::deque<mcp::ServerCore::CallResult> answers;
  std::vector<std::pair<std::string, std::string>> calls;  // (action, arguments)

  explicit FakeCaller(boost::asio::io_context& io_) : io(io_) {}
  void call(const std::string& action, std::string arguments, std::string, Done done) override {
    calls.emplace_back(action, arguments);
    auto answer = std::move(answers.front());
    answers.pop_front();
    boost::asio::post(io, [done = std::move(done), answer = std::move(answer)]() mutable { done(std::move(answer)); });
  }
};

// A reply in this catalog's terms (it has no priority field).
std::string reply_with(const std::string& content) {
  return R"({"action":"send_message","recipient":")" + std::string(k_customer) + R"(","content":")" + content + "\"}";
}

mcp::ServerCore::CallResult text_result(std::string text, bool is_error = false) {
  mcp::ToolResult result;
  result.text = std::move(text);
  result.is_error = is_error;
  return result;
}

}  // namespace

TEST_CASE("agent: an mcp lookup's answer goes back to the model, the call recorded", "[agent][mcp]") {
  AgentHarness h({}, llm::ProviderKind::openai, lookup_catalog());
  FakeCaller caller(h.io);
  h.agent->set_mcp(&caller);
  std::vector<store::ToolCallRecord> seen;
  h.agent->on_tool_call([&](const store::ToolCallRecord& r) { seen.push_back(r); });
  caller.answers.push_back(text_result(R"({"id":"ORD-7","status":"shipped"})"));
  h.receive("wamid.1", "Where is ORD-7?");
  h.fake.push(FakeReply::text(R"({"action":"lookup_order","order_id":"ORD-7","detail":null})"));
  h.fake.push(FakeReply::text(reply_with("ORD-7 has shipped.")));
  h.decide(1);
  INFO(h.decisions[0].detail);
  CHECK(h.decisions[0].outcome == agent::Outcome::queued);
  REQUIRE(caller.calls.size() == 1);
  CHECK(caller.calls[0] == std::pair<std::string, std::string>{"lookup_order", R"({"id":"ORD-7"})"});
  const auto second = h.turns(1);
  REQUIRE(second.size() == 3);
  CHECK_THAT(second[2].second, Catch::Contains(R"("status":"shipped")"));
  CHECK(h.count("SELECT count(*) FROM v_tool_calls WHERE action = 'lookup_order' AND kind = 'mcp'"
                " AND server = 'orders' AND tool = 'get_order' AND outcome = 'ok' AND attempt = 1"
                " AND result_bytes = 33 AND channel = 'whatsapp'") == 1);
  CHECK(h.count("SELECT count(*) FROM v_audit WHERE event = 'tool_call'") == 1);
  CHECK(h.count("SELECT count(*) FROM v_audit WHERE event = 'tool_call' AND " + test::json_text("detail", "tool") +
                " = 'get_order'") == 1);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].outcome == store::ToolOutcome::ok);
}

TEST_CASE("agent: an mcp tool that fails or cannot be called is described to the model", "[agent][mcp]") {
  struct Row {
    const char* what;
    mcp::ServerCore::CallResult result;
    const char* told;     // a substring of the tool turn
    const char* outcome;  // v_tool_calls.outcome
  };
  const Row rows[] = {
      {"isError", text_result("no such order", true), "the tool reported an error: no such order", "tool_error"},
      {"a JSON-RPC error", std::unexpected(mcp::CallError{mcp::CallErrorKind::rejected, "Invalid params"}),
       "the tool refused the call: Invalid params", "rejected"},
      {"no answer in time", std::unexpected(mcp::CallError{mcp::CallErrorKind::timed_out, "deadline"}),
       "did not answer in time", "timed_out"},
      {"the server down", std::unexpected(mcp::CallError{mcp::CallErrorKind::unavailable, "exited with status 1"}),
       "unavailable right now", "unavailable"},
      {"not pinned", std::unexpected(mcp::CallError{mcp::CallErrorKind::disabled, "incompatible"}),
       "the tool is unavailable", "disabled"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    AgentHarness h({}, llm::ProviderKind::openai, lookup_catalog());
    FakeCaller caller(h.io);
    h.agent->set_mcp(&caller);
    caller.answers.push_back(row.result);
    h.receive("wamid.1", "Where is ORD-7?");
    h.fake.push(FakeReply::text(R"({"action":"lookup_order","order_id":"ORD-7","detail":true})"));
    h.fake.push(FakeReply::text(reply_with("I could not look it up.")));
    h.decide(1);
    INFO(h.decisions[0].detail);
    INFO(h.decisions[0].detail);
    CHECK(h.decisions[0].outcome == agent::Outcome::queued);
    REQUIRE(caller.calls.size() == 1);
    CHECK(caller.calls[0].second == R"({"id":"ORD-7","detail":true})");
    const auto second = h.turns(1);
    REQUIRE(second.size() == 3);
    CHECK_THAT(second[2].second, Catch::Contains(row.told));
    CHECK(h.count(std::string("SELECT count(*) FROM v_tool_calls WHERE outcome = '") + row.outcome + "'") == 1);
  }
}

TEST_CASE("agent: without MCP servers an mcp action's call is disabled, never made", "[agent][mcp]") {
  AgentHarness h({}, llm::ProviderKind::openai, lookup_catalog());
  h.receive("wamid.1", "Where is ORD-7?");
  h.fake.push(FakeReply::text(R"({"action":"lookup_order","order_id":"ORD-7"})"));
  h.fake.push(FakeReply::text(reply_with("I could not look it up.")));
  h.decide(1);
  INFO(h.decisions[0].detail);
  CHECK(h.decisions[0].outcome == agent::Outcome::queued);
  CHECK_THAT(h.turns(1)[2].second, Catch::Contains("no MCP servers are configured"));
  CHECK(h.count("SELECT count(*) FROM v_tool_calls WHERE outcome = 'disabled' AND result_bytes = 0") == 1);
}

TEST_CASE("agent: an http tool's call is recorded with its URL template, never the filled URL", "[agent][mcp]") {
  AgentHarness h;
  h.receive("wamid.1", "Status of my order?");
  h.tools.push_response(503, "busy");
  h.fake.push(FakeReply::text(
      R"({"action":"query_status","recipient":"15551234567","content":"order status","priority":"low"})"));
  h.fake.push(FakeReply::text(send_message(k_customer, "Try later.")));
  h.decide(1);
  INFO(h.decisions[0].detail);
  CHECK(h.count("SELECT count(*) FROM v_tool_calls WHERE kind = 'http'") == 1);
  CHECK(h.count("SELECT count(*) FROM v_tool_calls WHERE outcome = 'tool_error'") == 1);
  CHECK(h.count("SELECT count(*) FROM v_tool_calls WHERE result_bytes = 4") == 1);
  CHECK(h.count("SELECT count(*) FROM v_tool_calls WHERE kind = 'http' AND server IS NULL AND outcome = 'tool_error'"
                " AND result_bytes = 4 AND tool NOT LIKE '%15551234567%' AND tool LIKE '%{recipient}%'") == 1);
}

TEST_CASE("tool_arguments: set fields under their argument names, nulls and unused fields left out", "[agent][mcp]") {
  const auto& catalog = lookup_catalog();
  const auto* action = catalog.find_action("lookup_order");
  CHECK(agent::tool_arguments(catalog, *action, R"({"action":"lookup_order","order_id":"ORD-1","detail":false})") ==
        R"({"id":"ORD-1","detail":false})");
  CHECK(agent::tool_arguments(catalog, *action, R"({"action":"lookup_order","order_id":"ORD-1","detail":null})") ==
        R"({"id":"ORD-1"})");
  CHECK_FALSE(agent::tool_arguments(catalog, *catalog.find_action("send_message"), "{}"));
  CHECK_FALSE(agent::tool_arguments(catalog, *action, "[1]"));
}

TEST_CASE("decide: a valid mcp lookup runs its tool with the arguments, until the step limit", "[agent][mcp][decide]") {
  const auto& catalog = lookup_catalog();
  const std::string output = R"({"action":"lookup_order","order_id":"ORD-9"})";
  const agent::Answered answered{output, validator::validate(catalog, output, {k_customer, "ORD-9?"})};
  REQUIRE(answered.verdict.ok);
  const agent::Limits limits{.max_retries = 2, .max_tool_steps = 2};
  struct Row {
    int tool_steps;
    const char* step;  // RunTool or Escalate
  };
  for (const Row row : {Row{0, "RunTool"}, Row{1, "RunTool"}, Row{2, "Escalate"}}) {
    CAPTURE(row.tool_steps);
    const agent::Progress progress{.attempts = 1, .failed = 0, .tool_steps = row.tool_steps};
    const agent::Step step = agent::decide(answered, progress, limits, catalog, k_customer);
    if (std::string(row.step) == "RunTool") {
      const auto* run = std::get_if<agent::RunTool>(&step);
      REQUIRE(run);
      CHECK(run->action == "lookup_order");
      const auto* target = std::get_if<agent::McpTarget>(&run->target);
      REQUIRE(target);
      CHECK(target->arguments == R"({"id":"ORD-9"})");
      CHECK(run->call == output);
    } else {
      const auto* escalate = std::get_if<agent::Escalate>(&step);
      REQUIRE(escalate);
      CHECK(escalate->reason == store::EscalationReason::contract_failed);
      CHECK(std::holds_alternative<agent::PastToolLimit>(escalate->detail));
    }
  }
}

namespace {

const catalog::Catalog& act_catalog() {
  static const catalog::Catalog catalog = [] {
    auto parsed = catalog::Catalog::parse(R"({
      "name": "act.test", "action_field": "action",
      "fields": {
        "recipient": {"type": "string", "minLength": 1},
        "content": {"type": "string", "minLength": 1},
        "party": {"type": "integer", "minimum": 1, "maximum": 12}
      },
      "actions": [
        {"name": "book", "description": "Book a table.", "kind": "mcp", "text_field": "content",
         "required": ["recipient", "content", "party"], "policy": {"recipient_field": "recipient"},
         "mcp": {"server": "bookings", "tool": "create_booking", "use": "act", "arguments": {"content": "note"}}},
        {"name": "cancel", "description": "Cancel a booking.", "kind": "mcp", "required": ["party"],
         "policy": {"requires_approval": true},
         "mcp": {"server": "bookings", "tool": "cancel_booking", "use": "act"}}
      ]})",
                                          "act.json");
    if (!parsed) throw std::runtime_error(parsed.error().front().to_string());
    return std::move(*parsed);
  }();
  return catalog;
}

agent::Step decide_act(const std::string& output) {
  const agent::Answered answered{output, validator::validate(act_catalog(), output, {k_customer, "book"})};
  return agent::decide(answered, agent::Progress{.attempts = 1}, agent::Limits{}, act_catalog(), k_customer);
}

}  // namespace

TEST_CASE("decide: a valid mcp act is queued as a tool call with its follow-up, or proposed", "[agent][mcp][decide]") {
  const auto queued = decide_act(R"({"action":"book","recipient":"15551234567","content":"Booked for 2.","party":2})");
  const auto* queue = std::get_if<agent::Queue>(&queued);
  REQUIRE(queue);
  REQUIRE(queue->reply.tool);
  CHECK(queue->reply.tool->server == "bookings");
  CHECK(queue->reply.tool->tool == "create_booking");
  CHECK(queue->reply.tool->arguments == R"({"recipient":"15551234567","note":"Booked for 2.","party":2})");
  REQUIRE(queue->reply.tool->follow_up);
  CHECK(queue->reply.tool->follow_up->recipient == "15551234567");
  CHECK(queue->reply.tool->follow_up->body == "Booked for 2.");

  // requires_approval: a proposal; no text_field: no follow-up.
  const auto proposed = decide_act(R"({"action":"cancel","party":4})");
  const auto* propose = std::get_if<agent::Propose>(&proposed);
  REQUIRE(propose);
  CHECK(propose->reason == store::EscalationReason::needs_approval);
  REQUIRE(propose->reply.tool);
  CHECK(propose->reply.tool->arguments == R"({"party":4})");
  CHECK_FALSE(propose->reply.tool->follow_up);

  // Another recipient: the policy refuses it before anything is decided.
  const auto refused = decide_act(R"({"action":"book","recipient":"15559999999","content":"x","party":2})");
  CHECK(std::holds_alternative<agent::Ask>(refused));
}

TEST_CASE("agent: a decided act is an outbox row for the tool, the message decided", "[agent][mcp]") {
  AgentHarness h({}, llm::ProviderKind::openai, act_catalog());
  h.receive("wamid.1", "A table for two, please");
  h.fake.push(FakeReply::text(R"({"action":"book","recipient":"15551234567","content":"Booked for 2.","party":2})"));
  h.decide(1);
  CHECK(h.decisions[0].outcome == agent::Outcome::queued);
  CHECK(h.count("SELECT count(*) FROM v_actions WHERE status = 'approved' AND tool_server = 'bookings'"
                " AND tool_name = 'create_booking' AND follow_up = 'Booked for 2.' AND recipient = '15551234567'"
                " AND body = '{\"recipient\":\"15551234567\",\"note\":\"Booked for 2.\",\"party\":2}'") == 1);
  CHECK(h.count("SELECT count(*) FROM v_messages WHERE state = 'decided'") == 1);
  CHECK(h.count("SELECT count(*) FROM v_tool_calls") == 0);  // called by the outbox, not here
}
