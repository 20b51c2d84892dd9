// MCP over Streamable HTTP as requests and answers: the headers each request carries, and
// what every kind of answer means (JSON, an event stream, 202, an expired session, a
// refused token, a server error, no answer at all).
#include <catch2/catch.hpp>

#include <string>

#include "mcp/http_exchange.h"

using namespace dispatchd;
using mcp::HttpOutcomeKind;

namespace {

const mcp::HttpEndpoint k_endpoint{"http://127.0.0.1:3001/mcp", "s3cret-token", std::chrono::seconds(5)};

net::HttpResult answer(int status, std::string content_type, std::string body, std::string session = "") {
  net::HttpResponse response{status, {}, std::move(body)};
  if (!content_type.empty()) response.headers.add("content-type", content_type);
  if (!session.empty()) response.headers.add("mcp-session-id", session);
  return response;
}

}  // namespace

TEST_CASE("mcp http: the headers of each request", "[mcp]") {
  const auto init = mcp::post_message(k_endpoint, {}, R"({"jsonrpc":"2.0","id":1,"method":"initialize"})", true);
  CHECK(init.method == "POST");
  CHECK(init.url == "http://127.0.0.1:3001/mcp");
  CHECK(init.timeout == std::chrono::seconds(5));
  CHECK(init.headers.get("Content-Type") == "application/json");
  CHECK(init.headers.get("Accept") == "application/json, text/event-stream");
  CHECK(init.headers.get("Authorization") == "Bearer s3cret-token");
  CHECK_FALSE(init.headers.get("Mcp-Session-Id"));
  CHECK_FALSE(init.headers.get("MCP-Protocol-Version"));

  const mcp::HttpSessionState state{"sess-42", "2025-06-18"};
  const auto call = mcp::post_message(k_endpoint, state, R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", false);
  CHECK(call.headers.get("Mcp-Session-Id") == "sess-42");
  CHECK(call.headers.get("MCP-Protocol-Version") == "2025-06-18");
  CHECK(call.body == R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");

  const auto without_token = mcp::post_message({"http://127.0.0.1:3001/mcp", "", {}}, state, "{}", false);
  CHECK_FALSE(without_token.headers.get("Authorization"));

  const auto end = mcp::delete_session(k_endpoint, state);
  CHECK(end.method == "DELETE");
  CHECK(end.body.empty());
  CHECK(end.headers.get("Mcp-Session-Id") == "sess-42");
}

TEST_CASE("mcp http: what each answer means", "[mcp]") {
  SECTION("one JSON body, and the session id the initialize answer gives") {
    const auto out = mcp::read_http_answer(
        answer(200, "application/json; charset=utf-8", R"({"jsonrpc":"2.0","id":1,"result":{}})", "sess-1"), false);
    CHECK(out.kind == HttpOutcomeKind::messages);
    CHECK(out.messages == std::vector<std::string>{R"({"jsonrpc":"2.0","id":1,"result":{}})"});
    CHECK(out.session_id == "sess-1");
  }
  SECTION("an event stream: its messages in order, its retry and last id; the last event needs no blank line") {
    const auto out = mcp::read_http_answer(
        answer(200, "text/event-stream",
               "retry: 2000\nid: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"
               "event: ping\ndata: x\n\n"
               "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}"),
        true);
    CHECK(out.kind == HttpOutcomeKind::messages);
    CHECK(out.messages == std::vector<std::string>{R"({"jsonrpc":"2.0","method":"notifications/progress"})",
                                                   R"({"jsonrpc":"2.0","id":3,"result":{}})"});
    CHECK(out.retry == std::chrono::milliseconds(2000));
    CHECK(out.last_event_id == "e2");
  }
  SECTION("202 and empty bodies: nothing to read") {
    CHECK(mcp::read_http_answer(answer(202, "", ""), true).kind == HttpOutcomeKind::accepted);
    CHECK(mcp::read_http_answer(answer(200, "application/json", ""), true).kind == HttpOutcomeKind::accepted);
  }
  struct Row {
    net::HttpResult result;
    bool had_session;
    HttpOutcomeKind kind;
    const char* why;
  };
  const std::vector<Row> rows = {
      {answer(404, "text/plain", "Session not found"), true, HttpOutcomeKind::session_expired, "HTTP 404"},
      {answer(404, "text/plain", "Not Found"), false, HttpOutcomeKind::refused, "HTTP 404: \"Not Found\""},
      {answer(400, "application/json",
              R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}})"),
       true, HttpOutcomeKind::session_expired, "No valid session ID"},
      {answer(400, "application/json", R"({"error":"bad JSON"})"), true, HttpOutcomeKind::refused, "HTTP 400"},
      {answer(401, "", ""), false, HttpOutcomeKind::unauthorized, "HTTP 401"},
      {answer(403, "text/plain", "forbidden"), true, HttpOutcomeKind::unauthorized, "HTTP 403: \"forbidden\""},
      {answer(429, "", ""), true, HttpOutcomeKind::unavailable, "HTTP 429"},
      {answer(503, "text/html", "<h1>down</h1>"), true, HttpOutcomeKind::unavailable, "HTTP 503"},
      {std::unexpected(net::TransportError{net::TransportErrorKind::connect_failed, "connection refused"}), true,
       HttpOutcomeKind::unavailable, "no answer: connection refused"},
      {answer(200, "text/html", "<html>"), true, HttpOutcomeKind::refused, "an answer of type \"text/html\""},
      {answer(200, "", "{}"), true, HttpOutcomeKind::refused, "an answer of type \"(none)\""},
  };
  for (const auto& row : rows) {
    const auto out = mcp::read_http_answer(row.result, row.had_session);
    INFO(out.why);
    CHECK(out.kind == row.kind);
    CHECK_THAT(out.why, Catch::Contains(row.why));
    CHECK(out.why.find("s3cret") == std::string::npos);
  }
}
