// One MCP server over stdio kept connected, against tests/fakes/mcp_script_server.py: the
// handshake and a paginated listing, calls and their answers, a hang (timed out), a crash
// mid-call (unavailable, then the server is started again and works), a revision the client
// does not speak, and a program that cannot start.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "mcp/stdio_client.h"
#include "tests/io_run.h"
#include "tests/mcp/client_harness.h"
#include "tests/test_util.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using mcp::CallErrorKind;
using mcp::StdioClient;

namespace {

mcp::StdioClientSettings client_settings(std::vector<std::string> extra_args = {}) {
  mcp::StdioClientSettings s;
  s.name = "script";
  // Debian's python3 by its path: a launcher found in PATH (pyenv's shims) adds variables of its own.
  s.command.argv = {"/usr/bin/python3", test::source_path("tests/fakes/mcp_script_server.py")};
  for (auto& arg : extra_args) s.command.argv.push_back(std::move(arg));
  s.command.env = {{"PATH", "/usr/bin:/bin"}};
  s.limits.exit_wait = 300ms;
  s.limits.term_wait = 300ms;
  s.session.client = {"dispatchd", "test"};
  s.session.startup_timeout = 10s;
  s.session.call_timeout = 500ms;
  s.restart = {100ms, 400ms};
  return s;
}

struct Fixture {
  boost::asio::io_context io;
  std::vector<mcp::ServerStatus> statuses;
  std::vector<std::string> log;
  std::unique_ptr<StdioClient> client;

  explicit Fixture(mcp::StdioClientSettings s = client_settings()) {
    client = std::make_unique<StdioClient>(
        io, std::move(s), [this](const mcp::ServerStatus& st) { statuses.push_back(st); },
        [this](std::string line) { log.push_back(std::move(line)); });
    client->start();
  }
  ~Fixture() { client.reset(); }

  void wait_up(int restarts = 0) {
    test::run_until(io, [&] { return client->status().up && client->status().restarts >= restarts; });
  }
  StdioClient::CallResult call(const std::string& tool, const std::string& args = "{}") {
    return test::call_and_wait(io, *client, tool, args);
  }
  bool logged(const std::string& text) const {
    for (const auto& line : log)
      if (line.find(text) != std::string::npos) return true;
    return false;
  }
};

}  // namespace

TEST_CASE("mcp stdio client: up with every page of tools, calls answered", "[mcp][stdio]") {
  Fixture f;
  f.wait_up();
  const auto& status = f.client->status();
  CHECK(status.protocol_version == "2025-11-25");
  CHECK(status.server_name == "script");
  REQUIRE(status.tools.size() == 4);  // two pages of two
  CHECK(status.tools[3].name == "fail");

  const auto echoed = f.call("echo", R"({"message":"hola"})");
  REQUIRE(echoed);
  CHECK(echoed->text == "hola");
  const auto failed = f.call("fail");
  REQUIRE(failed);
  CHECK(failed->is_error);
  const auto unknown = f.call("nope");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().kind == CallErrorKind::rejected);
  CHECK(f.logged("stderr: got: notifications/initialized"));
}

TEST_CASE("mcp stdio client: a hang times out and the server stays up", "[mcp][stdio]") {
  Fixture f;
  f.wait_up();
  const auto hung = f.call("hang");
  REQUIRE_FALSE(hung);
  CHECK(hung.error().kind == CallErrorKind::timed_out);
  test::run_until(f.io, [&] { return f.logged("stderr: got: notifications/cancelled"); });
  const auto echoed = f.call("echo", R"({"message":"still here"})");
  REQUIRE(echoed);
  CHECK(echoed->text == "still here");
  CHECK(f.client->status().restarts == 0);
}

TEST_CASE("mcp stdio client: a crash mid-call fails the call, the server is started again and works", "[mcp][stdio]") {
  Fixture f;
  f.wait_up();
  const auto crashed = f.call("crash");
  REQUIRE_FALSE(crashed);
  CHECK(crashed.error().kind == CallErrorKind::unavailable);
  CHECK_THAT(crashed.error().message, Catch::Contains("exited with status 7"));
  f.wait_up(1);
  const auto echoed = f.call("echo", R"({"message":"again"})");
  REQUIRE(echoed);
  CHECK(echoed->text == "again");
  bool saw_down = false;
  for (const auto& st : f.statuses) saw_down = saw_down || (!st.up && st.why.find("status 7") != std::string::npos);
  CHECK(saw_down);
}

TEST_CASE("mcp stdio client: a server that speaks another revision is down, and calls fail at once", "[mcp][stdio]") {
  Fixture f(client_settings({"2024-11-05"}));
  test::run_until(f.io, [&] { return !f.statuses.empty() && !f.statuses.back().up; });
  CHECK_THAT(f.statuses.back().why, Catch::Contains("protocol revision 2024-11-05"));
  const auto refused = f.call("echo");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == CallErrorKind::not_sent);  // never written: the tool did not run
  f.client->stop();
}

TEST_CASE("mcp stdio client: a program that cannot start is down, and tried again", "[mcp][stdio]") {
  auto s = client_settings();
  s.command.argv = {"/nonexistent/mcp-server"};
  Fixture f(std::move(s));
  test::run_until(f.io, [&] { return f.client->status().restarts >= 2; });
  CHECK_FALSE(f.client->status().up);
  CHECK_THAT(f.client->status().why, Catch::Contains("cannot start /nonexistent/mcp-server"));
}
