// One MCP server over Streamable HTTP, against tests/fakes/mcp_http_server.py through the
// real libcurl transport: the handshake with its session id and revision header, JSON and
// event-stream answers, an expired session started over once, a refused token left down, a
// hang timed out, the session DELETEd at stop, a server that is not there, and event streams
// that end before their answer, resumed with Last-Event-ID.
#include <catch2/catch.hpp>

#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "mcp/http_client.h"
#include "mcp/stdio_process.h"
#include "net/curl_transport.h"
#include "tests/io_run.h"
#include "tests/mcp/client_harness.h"
#include "tests/test_util.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using mcp::CallErrorKind;
using mcp::HttpClient;

namespace {

// The fake server as a child process; its first line says its port.
struct HttpServer {
  std::shared_ptr<mcp::StdioProcess> process;
  int port = 0;

  HttpServer(boost::asio::io_context& io, std::vector<std::string> args) {
    std::vector<std::string> argv = {"/usr/bin/python3", test::source_path("tests/fakes/mcp_http_server.py")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto started = mcp::StdioProcess::start(io, {argv, {{"PATH", "/usr/bin:/bin"}}, ""}, {},
                                            {[this](std::string line) {
                                               if (port == 0) port = std::stoi(line.substr(line.find(':') + 1));
                                             },
                                             {},
                                             {}});
    if (!started) FAIL(started.error());
    process = *started;
    test::run_until(io, [&] { return port != 0; });
  }
  std::string url(const std::string& path = "/mcp") const { return "http://127.0.0.1:" + std::to_string(port) + path; }
};

struct HttpFixture {
  boost::asio::io_context io;
  net::CurlTransport transport{io};
  std::optional<HttpServer> server;
  std::vector<mcp::ServerStatus> statuses;
  std::vector<std::string> log;
  std::unique_ptr<HttpClient> client;

  explicit HttpFixture(std::vector<std::string> server_args = {}, std::string token = "", bool start_server = true,
                       const std::function<void(mcp::HttpClientSettings&)>& adjust = {}) {
    if (start_server) server.emplace(io, std::move(server_args));
    mcp::HttpClientSettings s;
    s.name = "http";
    s.endpoint = {server ? server->url() : "http://127.0.0.1:9/mcp", std::move(token), 5s};
    s.session.client = {"dispatchd", "test"};
    s.session.startup_timeout = 5s;
    s.session.call_timeout = 500ms;
    s.restart = {100ms, 400ms};
    if (adjust) adjust(s);
    client = std::make_unique<HttpClient>(
        io, transport, std::move(s), [this](const mcp::ServerStatus& st) { statuses.push_back(st); },
        [this](std::string line) { log.push_back(std::move(line)); });
    client->start();
  }
  ~HttpFixture() { client.reset(); }

  void wait_up() {
    test::run_until(io, [&] { return client->status().up; });
  }
  HttpClient::CallResult call(const std::string& tool, const std::string& args = "{}") {
    return test::call_and_wait(io, *client, tool, args);
  }
  // The fake server's own counts, or a control request's answer.
  std::string control(const std::string& method, const std::string& path) {
    std::optional<net::HttpResult> result;
    net::HttpRequest request;
    request.method = method;
    request.url = server->url(path);
    transport.send(std::move(request), [&](net::HttpResult r) { result = std::move(r); });
    test::run_until(io, [&] { return result.has_value(); });
    REQUIRE(*result);
    return (*result)->body;
  }
};

}  // namespace

TEST_CASE("mcp http client: up with every page of tools, calls answered, headers as required", "[mcp][http]") {
  for (const bool sse : {false, true}) {
    INFO((sse ? "event streams" : "JSON bodies"));
    HttpFixture f(sse ? std::vector<std::string>{"--sse"} : std::vector<std::string>{});
    f.wait_up();
    CHECK(f.client->status().tools.size() == 3);
    CHECK(f.client->status().protocol_version == "2025-11-25");
    const auto echoed = f.call("echo", R"({"message":"hola"})");
    REQUIRE(echoed);
    CHECK(echoed->text == "hola");
    const auto failed = f.call("fail");
    REQUIRE(failed);
    CHECK(failed->is_error);
    CHECK_THAT(f.control("GET", "/control/stats"), Catch::Contains(R"("bad_headers": 0)"));
  }
}

TEST_CASE("mcp http client: an expired session starts over once, its call fails, the next works", "[mcp][http]") {
  HttpFixture f;
  f.wait_up();
  f.control("POST", "/control/expire");
  const auto lost = f.call("echo", R"({"message":"lost"})");
  REQUIRE_FALSE(lost);
  CHECK(lost.error().kind == CallErrorKind::unavailable);
  f.wait_up();
  const auto echoed = f.call("echo", R"({"message":"again"})");
  REQUIRE(echoed);
  CHECK(echoed->text == "again");
  CHECK_THAT(f.control("GET", "/control/stats"), Catch::Contains(R"("initializes": 2)"));
}

TEST_CASE("mcp http client: a hang times out and the server stays up", "[mcp][http]") {
  HttpFixture f;
  f.wait_up();
  const auto hung = f.call("hang");
  REQUIRE_FALSE(hung);
  CHECK(hung.error().kind == CallErrorKind::timed_out);
  const auto echoed = f.call("echo", R"({"message":"still"})");
  REQUIRE(echoed);
  CHECK(f.client->status().restarts == 0);
}

TEST_CASE("mcp http client: stop DELETEs the session", "[mcp][http]") {
  HttpFixture f;
  f.wait_up();
  f.client->stop();
  test::run_until(f.io,
                  [&] { return f.control("GET", "/control/stats").find(R"("deletes": 1)") != std::string::npos; });
}

TEST_CASE("mcp http client: a refused token leaves the server down, not retried", "[mcp][http]") {
  HttpFixture f({"--token", "right"}, "wrong");
  test::run_until(f.io, [&] { return !f.statuses.empty(); });
  CHECK_FALSE(f.statuses.back().up);
  CHECK_THAT(f.statuses.back().why, Catch::Contains("refused the token") && Catch::Contains("HTTP 401"));
  // Given time for several restarts, none comes.
  boost::asio::steady_timer wait(f.io, 600ms);
  bool waited = false;
  wait.async_wait([&](const boost::system::error_code&) { waited = true; });
  test::run_until(f.io, [&] { return waited; });
  CHECK(f.client->status().restarts == 0);
  CHECK(f.statuses.size() == 1);
}

TEST_CASE("mcp http client: a server that is not there is down, and tried again", "[mcp][http]") {
  HttpFixture f({}, "", false);
  test::run_until(f.io, [&] { return f.client->status().restarts >= 2; });
  CHECK_FALSE(f.client->status().up);
  CHECK_THAT(f.client->status().why, Catch::Contains("initialize could not be delivered"));
  const auto refused = f.call("echo");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == CallErrorKind::not_sent);  // never written: the tool did not run
}

TEST_CASE("mcp http client: a stream that ends before its answer is resumed with Last-Event-ID after the retry",
          "[mcp][http]") {
  // The server holds the resumed stream open after the answer (for 20 s): the call can only
  // end well within its 5 s deadline if the answer is read as it arrives.
  HttpFixture f({"--resume", "--retry", "300"}, "", true,
                [](mcp::HttpClientSettings& s) { s.session.call_timeout = 5s; });
  f.wait_up();
  const auto echoed = f.call("echo", R"({"message":"resumed"})");
  REQUIRE(echoed);
  CHECK(echoed->text == "resumed");
  // Once the answer is in, the client lets go of the stream the server still holds.
  test::run_until(f.io, [&] {
    return f.control("GET", "/control/stats").find(R"("gets_closed_by_client": 1)") != std::string::npos;
  });
  const std::string stats = f.control("GET", "/control/stats");
  CHECK_THAT(stats, Catch::Contains(R"("gets": 1)") && Catch::Contains(R"("last_event_ids": ["ev-1"])") &&
                        Catch::Contains(R"("bad_headers": 0)"));
  // The GET came after the retry the server asked for (the server times it from the end of
  // the stream it closed, so it cannot be shorter).
  std::smatch delay;
  REQUIRE(std::regex_search(stats, delay, std::regex(R"("resume_delays_ms": \[(\d+)\])")));
  CHECK(std::stoi(delay[1]) >= 290);
  // The session goes on as before.
  const auto failed = f.call("fail");
  REQUIRE(failed);
  CHECK(failed->is_error);
  CHECK(f.client->status().restarts == 0);
}

TEST_CASE("mcp http client: a stream that keeps ending without its answer fails the call after the last resume",
          "[mcp][http]") {
  HttpFixture f({"--resume-never", "--retry", "50"}, "", true, [](mcp::HttpClientSettings& s) {
    s.session.call_timeout = 5s;
    s.max_resumes = 2;
  });
  f.wait_up();
  const auto lost = f.call("echo", R"({"message":"never"})");
  REQUIRE_FALSE(lost);
  CHECK(lost.error().kind == CallErrorKind::unavailable);
  CHECK_THAT(lost.error().message, Catch::Contains("ended before the answer again after 2 resumes"));
  // Each GET resumed from the last id the stream before it sent.
  CHECK_THAT(f.control("GET", "/control/stats"),
             Catch::Contains(R"("gets": 2)") && Catch::Contains(R"("last_event_ids": ["ev-1", "ev-2"])"));
  CHECK(f.client->status().up);
  CHECK(f.call("fail"));
}
