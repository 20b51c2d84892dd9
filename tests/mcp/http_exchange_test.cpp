// MCP over Streamable HTTP as requests and answers: the headers each request carries, and
// what every kind of answer means (JSON, an event stream, 202, an expired session, a
// refused token, a server error, no answer at all); and resuming an event stream that ended
// before its answer (the GET, its stream read as it arrives, when and from where).
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

TEST_CASE("mcp http: the GET that resumes a stream", "[mcp]") {
  const mcp::HttpSessionState state{"sess-42", "2025-11-25"};
  const auto get = mcp::resume_stream(k_endpoint, state, "ev-7");
  CHECK(get.method == "GET");
  CHECK(get.url == "http://127.0.0.1:3001/mcp");
  CHECK(get.body.empty());
  CHECK(get.headers.get("Accept") == "text/event-stream");
  CHECK(get.headers.get("Last-Event-ID") == "ev-7");
  CHECK(get.headers.get("Mcp-Session-Id") == "sess-42");
  CHECK(get.headers.get("MCP-Protocol-Version") == "2025-11-25");
  CHECK(get.headers.get("Authorization") == "Bearer s3cret-token");
  CHECK_FALSE(get.on_body);  // the client sets its own reader
}

TEST_CASE("mcp http: which message answers a request", "[mcp]") {
  CHECK(mcp::answers(R"({"jsonrpc":"2.0","id":3,"result":{}})", 3));
  CHECK(mcp::answers(R"({"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}})", 3));
  CHECK_FALSE(mcp::answers(R"({"jsonrpc":"2.0","id":4,"result":{}})", 3));
  CHECK_FALSE(mcp::answers(R"({"jsonrpc":"2.0","id":"3","result":{}})", 3));
  CHECK_FALSE(mcp::answers(R"({"jsonrpc":"2.0","id":3,"method":"ping"})", 3));  // the server's own request
  CHECK_FALSE(mcp::answers(R"({"jsonrpc":"2.0","method":"notifications/progress"})", 3));
  CHECK_FALSE(mcp::answers("not json", 3));
}

TEST_CASE("mcp http: a resumed stream read as it arrives", "[mcp]") {
  const std::string stream =
      "id: e2\r\nretry: 700\r\ndata:\r\n\r\n"
      ": keep-alive\r\n\r\n"
      "id: e3\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\r\n\r\n"
      "id: e4\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\r\n\r\n";
  const std::vector<std::string> expected = {R"({"jsonrpc":"2.0","method":"notifications/progress"})",
                                             R"({"jsonrpc":"2.0","id":5,"result":{}})"};
  const net::HttpResponse head{200, {{"Content-Type", "text/event-stream"}}, ""};

  SECTION("the same messages however the stream is cut, each as soon as its event ends") {
    for (const std::size_t cut : {std::size_t{1}, std::size_t{2}, std::size_t{7}, stream.size()}) {
      INFO("chunks of " << cut);
      mcp::StreamedAnswer answer;
      std::vector<std::string> got;
      for (std::size_t at = 0; at < stream.size(); at += cut) {
        auto messages = answer.feed(head, std::string_view(stream).substr(at, cut));
        got.insert(got.end(), messages.begin(), messages.end());
      }
      CHECK(got == expected);
      CHECK_FALSE(answer.refused());
      const auto ended = answer.finish(head, true);
      CHECK(ended.kind == HttpOutcomeKind::messages);
      CHECK(ended.event_stream);
      CHECK(ended.messages.empty());  // all handed over already
      CHECK(ended.last_event_id == "e4");
      CHECK(ended.retry == std::chrono::milliseconds(700));
    }
  }
  SECTION("from a transport that does not stream, the whole body at the end") {
    mcp::StreamedAnswer answer;
    const auto ended = answer.finish(net::HttpResponse{200, head.headers, stream}, true);
    CHECK(ended.kind == HttpOutcomeKind::messages);
    CHECK(ended.messages == expected);
    CHECK(ended.last_event_id == "e4");
  }
  SECTION("an answer that is no event stream is kept to say why at the end") {
    mcp::StreamedAnswer answer;
    const net::HttpResponse gone{404, {{"Content-Type", "text/plain"}}, ""};
    CHECK(answer.feed(gone, "Session ").empty());
    CHECK(answer.feed(gone, "not found").empty());
    const auto ended = answer.finish(gone, true);
    CHECK(ended.kind == HttpOutcomeKind::session_expired);
    CHECK_THAT(ended.why, Catch::Contains("Session not found"));
    mcp::StreamedAnswer refused;
    const net::HttpResponse no_get{405, {}, ""};
    CHECK(refused.finish(no_get, true).kind == HttpOutcomeKind::refused);
  }
  SECTION("an event over the limit refuses the stream") {
    mcp::StreamedAnswer answer;
    CHECK(answer.feed(head, "data: " + std::string(5u << 20, 'x')).empty());
    CHECK(answer.refused());
    const auto ended = answer.finish(head, true);
    CHECK(ended.kind == HttpOutcomeKind::refused);
    CHECK_THAT(ended.why, Catch::Contains("refused"));
  }
  SECTION("a transport error is no answer") {
    mcp::StreamedAnswer answer;
    CHECK(answer.feed(head, "id: e9\ndata:\n\n").empty());
    const auto ended =
        answer.finish(std::unexpected(net::TransportError{net::TransportErrorKind::timed_out, "timed out"}), true);
    CHECK(ended.kind == HttpOutcomeKind::unavailable);
  }
}

TEST_CASE("mcp http: when and from where an ended stream is resumed", "[mcp]") {
  using std::chrono::milliseconds;
  const auto ended = [](std::string id, std::optional<milliseconds> retry) {
    mcp::HttpOutcome out;
    out.kind = HttpOutcomeKind::messages;
    out.event_stream = true;
    out.last_event_id = std::move(id);
    out.retry = retry;
    return out;
  };
  SECTION("the server's retry, else the default, never beyond the cap") {
    struct Row {
      std::optional<milliseconds> retry;
      milliseconds delay;
    };
    for (const Row& row :
         {Row{milliseconds(500), milliseconds(500)}, Row{milliseconds(0), milliseconds(0)},
          Row{std::nullopt, mcp::k_default_resume_delay}, Row{milliseconds(999'999'999), mcp::k_max_resume_delay}}) {
      mcp::StreamPosition at;
      const auto delay = mcp::next_resume(at, ended("e1", row.retry), 3);
      REQUIRE(delay);
      CHECK(*delay == row.delay);
      CHECK(at.last_event_id == "e1");
      CHECK(at.resumes == 1);
    }
  }
  SECTION("a stream that sends no new id or retry resumes from what the one before sent") {
    mcp::StreamPosition at;
    REQUIRE(mcp::next_resume(at, ended("e1", milliseconds(200)), 3));
    const auto again = mcp::next_resume(at, ended("", std::nullopt), 3);
    REQUIRE(again);
    CHECK(*again == milliseconds(200));
    CHECK(at.last_event_id == "e1");
    REQUIRE(mcp::next_resume(at, ended("e5", std::nullopt), 3));
    CHECK(at.last_event_id == "e5");
    CHECK(at.resumes == 3);
  }
  SECTION("nothing to resume from, or the limit reached: the call ends") {
    mcp::StreamPosition none;
    const auto no_id = mcp::next_resume(none, ended("", milliseconds(100)), 3);
    REQUIRE_FALSE(no_id);
    CHECK_THAT(no_id.error(), Catch::Contains("no event id"));
    mcp::StreamPosition at;
    REQUIRE(mcp::next_resume(at, ended("e1", std::nullopt), 1));
    const auto over = mcp::next_resume(at, ended("e2", std::nullopt), 1);
    REQUIRE_FALSE(over);
    CHECK_THAT(over.error(), Catch::Contains("again after 1 resume;"));
  }
}
