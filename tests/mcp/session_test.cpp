// One MCP connection's conversation, scripted: the handshake, the revision check, paginated
// listings, calls answered out of order, deadlines, a server's own requests, list changes,
// junk, and a lost connection. The server's side is written out as the texts it would send.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "mcp/session.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using mcp::CallDone;
using mcp::CallErrorKind;
using mcp::Session;
using mcp::SessionFailed;
using mcp::Step;
using mcp::ToolsListed;

namespace {

const Session::Clock::time_point t0{};

mcp::SessionSettings settings() {
  mcp::SessionSettings s;
  s.client = {"dispatchd", "0.11.0"};
  s.startup_timeout = 10s;
  s.call_timeout = 5s;
  s.max_result_bytes = 100;
  s.max_pages = 3;
  return s;
}

std::string hello(const std::string& version = "2025-11-25", bool tools = true) {
  return R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":")" + version + R"(","capabilities":)" +
         (tools ? R"({"tools":{"listChanged":true}})" : "{}") + R"(,"serverInfo":{"name":"orders","version":"1"}}})";
}

std::string page(int id, const std::string& tools, const std::string& cursor = "") {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":{"tools":[)" + tools + "]" +
         (cursor.empty() ? "" : R"(,"nextCursor":")" + cursor + "\"") + "}}";
}

std::string tool(const std::string& name) { return R"({"name":")" + name + R"(","inputSchema":{"type":"object"}})"; }

template <typename T>
std::vector<T> events_of(const Step& step) {
  std::vector<T> out;
  for (const auto& event : step.events)
    if (const auto* e = std::get_if<T>(&event)) out.push_back(*e);
  return out;
}

// A step the test does not look into, beyond this: it failed nothing.
void quiet(const Step& step) { CHECK(events_of<SessionFailed>(step).empty()); }

// A session through the handshake and a one-page listing of get_order: ready, next id 3.
Session ready_session() {
  Session session(settings());
  quiet(session.start(t0));
  quiet(session.on_message(hello(), t0));
  const auto listed = session.on_message(page(2, tool("get_order")), t0);
  REQUIRE(events_of<ToolsListed>(listed).size() == 1);
  REQUIRE(session.state() == Session::State::ready);
  return session;
}

}  // namespace

TEST_CASE("mcp session: initialize, initialized, then every page of tools/list", "[mcp]") {
  Session session(settings());
  const auto start = session.start(t0);
  REQUIRE(start.send.size() == 1);
  CHECK_THAT(start.send[0], Catch::Contains(R"("method":"initialize")") && Catch::Contains(R"("id":1)"));
  CHECK(session.state() == Session::State::initializing);

  // A notification and a log line before the answer to initialize change nothing.
  CHECK(session.on_message(R"({"jsonrpc":"2.0","method":"notifications/message","params":{}})", t0).send.empty());
  const auto answered = session.on_message(hello("2025-06-18"), t0 + 1s);
  REQUIRE(answered.send.size() == 2);
  CHECK(answered.send[0] == R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  CHECK(answered.send[1] == R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
  CHECK(answered.events.empty());

  const auto first = session.on_message(page(2, tool("get_order") + "," + tool("cancel_order"), "p2"), t0 + 1s);
  REQUIRE(first.send.size() == 1);
  CHECK(first.send[0] == R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"p2"}})");
  const auto last = session.on_message(page(3, tool("create_ticket")), t0 + 2s);
  const auto listed = events_of<ToolsListed>(last);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].protocol_version == "2025-06-18");
  CHECK(listed[0].hello.name == "orders");
  REQUIRE(listed[0].tools.size() == 3);
  CHECK(listed[0].tools[2].name == "create_ticket");
  CHECK(session.state() == Session::State::ready);
}

TEST_CASE("mcp session: a handshake that cannot succeed fails the session with the reason", "[mcp]") {
  struct Row {
    std::string answer;
    const char* reason;
  };
  const Row rows[] = {
      {hello("2024-11-05"),
       "the server speaks protocol revision 2024-11-05; dispatchd speaks 2025-11-25, 2025-06-18, "
       "2025-03-26"},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unsupported protocol version"}})",
       "initialize was refused: error -32602: Unsupported protocol version"},
      {R"({"jsonrpc":"2.0","id":1,"result":{"capabilities":{}}})", "the initialize answer is unreadable"},
  };
  for (const auto& row : rows) {
    INFO(row.answer);
    Session session(settings());
    quiet(session.start(t0));
    const auto step = session.on_message(row.answer, t0);
    const auto failed = events_of<SessionFailed>(step);
    REQUIRE(failed.size() == 1);
    CHECK_THAT(failed[0].why, Catch::Contains(row.reason));
    CHECK(step.send.empty());  // no notifications/initialized
    CHECK(session.state() == Session::State::failed);
  }
  SECTION("no answer to initialize: failed at the deadline, and initialize is never cancelled") {
    Session session(settings());
    quiet(session.start(t0));
    CHECK(session.on_tick(t0 + 9s).events.empty());
    const auto step = session.on_tick(t0 + 10s);
    CHECK(step.send.empty());
    REQUIRE(events_of<SessionFailed>(step).size() == 1);
    CHECK_THAT(events_of<SessionFailed>(step)[0].why, Catch::Contains("initialize unanswered within 10000 ms"));
    CHECK(session.on_message(hello(), t0 + 11s).send.empty());  // too late: nothing more happens
  }
}

TEST_CASE("mcp session: listings that would never end, or name a tool twice, fail", "[mcp]") {
  SECTION("a repeated cursor") {
    Session session(settings());
    quiet(session.start(t0));
    quiet(session.on_message(hello(), t0));
    quiet(session.on_message(page(2, tool("a"), "same"), t0));
    const auto step = session.on_message(page(3, tool("b"), "same"), t0);
    CHECK_THAT(events_of<SessionFailed>(step).at(0).why, Catch::Contains("repeats a cursor"));
  }
  SECTION("more pages than allowed") {
    Session session(settings());
    quiet(session.start(t0));
    quiet(session.on_message(hello(), t0));
    quiet(session.on_message(page(2, tool("a"), "c1"), t0));
    quiet(session.on_message(page(3, tool("b"), "c2"), t0));
    const auto step = session.on_message(page(4, tool("c"), "c3"), t0);
    CHECK_THAT(events_of<SessionFailed>(step).at(0).why, Catch::Contains("past 3 pages"));
  }
  SECTION("one tool on two pages") {
    Session session(settings());
    quiet(session.start(t0));
    quiet(session.on_message(hello(), t0));
    quiet(session.on_message(page(2, tool("a"), "c1"), t0));
    const auto step = session.on_message(page(3, tool("a")), t0);
    CHECK_THAT(events_of<SessionFailed>(step).at(0).why, Catch::Contains("names the tool a twice"));
  }
  SECTION("a server without tools is ready with none, and never asked for a list") {
    Session session(settings());
    quiet(session.start(t0));
    const auto step = session.on_message(hello("2025-11-25", false), t0);
    REQUIRE(step.send.size() == 1);  // notifications/initialized only
    REQUIRE(events_of<ToolsListed>(step).size() == 1);
    CHECK(events_of<ToolsListed>(step)[0].tools.empty());
    CHECK(session.state() == Session::State::ready);
  }
}

TEST_CASE("mcp session: calls are matched to answers in any order", "[mcp]") {
  Session session = ready_session();
  const auto a = session.call(10, "get_order", R"({"order":"A"})", "", t0);
  const auto b = session.call(11, "get_order", R"({"order":"B"})", "key-11", t0);
  REQUIRE(a.send.size() == 1);
  CHECK_THAT(a.send[0], Catch::Contains(R"("id":3)") && Catch::Contains(R"({"order":"A"})"));
  CHECK_THAT(b.send[0], Catch::Contains(R"("id":4)") && Catch::Contains("key-11"));

  const auto second = session.on_message(
      R"({"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"B: shipped"}]}})", t0 + 1s);
  const auto done_b = events_of<CallDone>(second);
  REQUIRE(done_b.size() == 1);
  CHECK(done_b[0].tag == 11);
  REQUIRE(done_b[0].result);
  CHECK(done_b[0].result->text == "B: shipped");

  const auto first = session.on_message(
      R"({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"no such order"}],"isError":true}})",
      t0 + 2s);
  const auto done_a = events_of<CallDone>(first);
  REQUIRE(done_a.size() == 1);
  CHECK(done_a[0].tag == 10);
  REQUIRE(done_a[0].result);
  CHECK(done_a[0].result->is_error);

  SECTION("an error answer, an unreadable answer") {
    quiet(session.call(12, "missing_tool", "{}", "", t0));
    const auto rejected =
        session.on_message(R"({"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown tool"}})", t0);
    REQUIRE(events_of<CallDone>(rejected).size() == 1);
    CHECK(events_of<CallDone>(rejected)[0].result.error().kind == CallErrorKind::rejected);
    CHECK(events_of<CallDone>(rejected)[0].result.error().message == "error -32602: Unknown tool");
    quiet(session.call(13, "get_order", "{}", "", t0));
    const auto bad = session.on_message(R"({"jsonrpc":"2.0","id":6,"result":{"text":"not content"}})", t0);
    CHECK(events_of<CallDone>(bad).at(0).result.error().kind == CallErrorKind::bad_answer);
  }
  SECTION("an answer to nothing, answered twice, or with a string id, is skipped") {
    CHECK(session.on_message(R"({"jsonrpc":"2.0","id":3,"result":{"content":[]}})", t0).events.empty());
    CHECK(session.on_message(R"({"jsonrpc":"2.0","id":99,"result":{}})", t0).events.empty());
    CHECK(session.on_message(R"({"jsonrpc":"2.0","id":"4","result":{}})", t0).events.empty());
    CHECK(session.stats().skipped_messages == 3);
  }
}

TEST_CASE("mcp session: a call past its deadline is cancelled, and its late answer ignored", "[mcp]") {
  Session session = ready_session();
  quiet(session.call(20, "get_order", "{}", "", t0));
  quiet(session.call(21, "get_order", "{}", "", t0 + 3s));
  CHECK(session.next_deadline() == t0 + 5s);
  const auto tick = session.on_tick(t0 + 5s);
  REQUIRE(tick.send.size() == 1);
  CHECK(tick.send[0] ==
        R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"timed out"}})");
  const auto timed_out = events_of<CallDone>(tick);
  REQUIRE(timed_out.size() == 1);
  CHECK(timed_out[0].tag == 20);
  CHECK(timed_out[0].result.error().kind == CallErrorKind::timed_out);
  CHECK(timed_out[0].result.error().message == "no answer within 5000 ms");

  const auto late = session.on_message(R"({"jsonrpc":"2.0","id":3,"result":{"content":[]}})", t0 + 6s);
  CHECK(late.events.empty());
  CHECK(session.stats().late_answers == 1);
  CHECK(session.state() == Session::State::ready);  // a slow call does not end the session
  CHECK(session.next_deadline() == t0 + 8s);
}

TEST_CASE("mcp session: the server's own requests are answered, ping with {}", "[mcp]") {
  Session session = ready_session();
  CHECK(session.on_message(R"({"jsonrpc":"2.0","id":"s1","method":"ping"})", t0).send ==
        std::vector<std::string>{R"({"jsonrpc":"2.0","id":"s1","result":{}})"});
  CHECK(
      session.on_message(R"({"jsonrpc":"2.0","id":8,"method":"sampling/createMessage","params":{}})", t0).send ==
      std::vector<std::string>{
          R"({"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"method not found: sampling/createMessage"}})"});
  CHECK(session.stats().server_requests == 2);
}

TEST_CASE("mcp session: a list change lists again, once, beside the calls", "[mcp]") {
  Session session = ready_session();
  const auto changed = session.on_message(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})", t0);
  REQUIRE(changed.send.size() == 1);
  CHECK(changed.send[0] == R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  CHECK(session.state() == Session::State::ready);
  // A call during the listing goes out, and a second change waits for the listing to end.
  CHECK(session.call(30, "get_order", "{}", "", t0).send.size() == 1);
  CHECK(session.on_message(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})", t0).send.empty());
  const auto listed = session.on_message(page(3, tool("get_order") + "," + tool("refund")), t0);
  REQUIRE(events_of<ToolsListed>(listed).size() == 1);
  CHECK(events_of<ToolsListed>(listed)[0].tools.size() == 2);
  REQUIRE(listed.send.size() == 1);  // the listing the second change asked for
  CHECK(listed.send[0] == R"({"jsonrpc":"2.0","id":5,"method":"tools/list"})");
  CHECK(session.stats().list_changes == 2);
}

TEST_CASE("mcp session: junk is counted and skipped, a lost connection ends every call", "[mcp]") {
  Session session = ready_session();
  CHECK(session.on_message("npm WARN deprecated something", t0).send.empty());
  CHECK(session.on_message("{\"jsonrpc\":\"2.0\",", t0).send.empty());
  CHECK(session.stats().skipped_messages == 2);

  quiet(session.call(40, "get_order", "{}", "", t0));
  quiet(session.call(41, "get_order", "{}", "", t0));
  const auto closed = session.close("the server exited (status 1)");
  const auto ended = events_of<CallDone>(closed);
  REQUIRE(ended.size() == 2);
  for (const auto& done : ended) {
    CHECK(done.result.error().kind == CallErrorKind::unavailable);
    CHECK(done.result.error().message == "the server exited (status 1)");
  }
  CHECK(session.state() == Session::State::closed);
  const auto after = session.call(42, "get_order", "{}", "", t0);
  CHECK(after.send.empty());
  CHECK(events_of<CallDone>(after).at(0).result.error().kind == CallErrorKind::not_sent);
  CHECK_FALSE(session.next_deadline().has_value());
}

TEST_CASE("mcp session: a listing unanswered fails the session, calls in flight end first as timed out or unavailable",
          "[mcp]") {
  Session session = ready_session();
  quiet(session.call(50, "get_order", "{}", "", t0));                                                 // due t0 + 5 s
  quiet(session.on_message(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})", t0));  // due t0 + 10 s
  quiet(session.call(51, "get_order", "{}", "", t0 + 8s));                                            // due t0 + 13 s
  const auto tick = session.on_tick(t0 + 10s);
  const auto done = events_of<CallDone>(tick);
  REQUIRE(done.size() == 2);
  CHECK(done[0].tag == 50);
  CHECK(done[0].result.error().kind == CallErrorKind::timed_out);
  CHECK(done[1].tag == 51);
  CHECK(done[1].result.error().kind == CallErrorKind::unavailable);
  CHECK_THAT(events_of<SessionFailed>(tick).at(0).why, Catch::Contains("tools/list unanswered"));
  CHECK(session.state() == Session::State::failed);
}

TEST_CASE("mcp session: a request the transport could not deliver ends now, not at its deadline", "[mcp]") {
  Session session = ready_session();
  quiet(session.call(60, "get_order", "{}", "", t0));
  const auto undelivered =
      session.undeliverable(3, mcp::CallError{CallErrorKind::unavailable, "no answer: connection refused"});
  REQUIRE(events_of<CallDone>(undelivered).size() == 1);
  CHECK(events_of<CallDone>(undelivered)[0].tag == 60);
  CHECK(events_of<CallDone>(undelivered)[0].result.error().message == "no answer: connection refused");
  CHECK_FALSE(session.next_deadline().has_value());
  CHECK(session.undeliverable(3, {}).events.empty());  // no longer waits: nothing
  CHECK(session.state() == Session::State::ready);

  quiet(session.on_message(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})", t0));
  const auto listing = session.undeliverable(4, mcp::CallError{CallErrorKind::unavailable, "HTTP 503"});
  CHECK_THAT(events_of<SessionFailed>(listing).at(0).why,
             Catch::Contains("tools/list could not be delivered: HTTP 503"));
  CHECK(session.state() == Session::State::failed);
}
