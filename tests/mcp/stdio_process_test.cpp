// An MCP server as a child process, against tests/fakes/mcp_stdio_server.py: lines both
// ways, the environment and directory exactly as configured, junk and over-long lines, a
// megabyte flood on stderr that must not stall anything, a crash, a server that ignores
// stdin EOF and SIGTERM (killed and reaped), and a program that does not exist.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "mcp/stdio_process.h"
#include "tests/io_run.h"
#include "tests/test_util.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using mcp::StdioProcess;

namespace {

struct Server {
  boost::asio::io_context io;
  std::vector<std::string> lines;
  std::vector<std::string> stderr_lines;
  std::optional<std::string> exit;
  std::shared_ptr<StdioProcess> process;

  explicit Server(const std::string& mode, mcp::StdioLimits limits = quick(), std::string cwd = "") {
    // Debian's python3 by its path: a launcher found in PATH (pyenv's shims) adds variables of its own.
    mcp::StdioCommand command{{"/usr/bin/python3", test::source_path("tests/fakes/mcp_stdio_server.py"), mode},
                              {{"PATH", "/usr/bin:/bin"}, {"MCP_TEST", "1"}},
                              std::move(cwd)};
    auto started = StdioProcess::start(io, command, limits,
                                       {[this](std::string l) { lines.push_back(std::move(l)); },
                                        [this](std::string l) { stderr_lines.push_back(std::move(l)); },
                                        [this](std::string how) { exit = std::move(how); }});
    if (!started) FAIL(started.error());
    process = *started;
  }
  static mcp::StdioLimits quick() {
    mcp::StdioLimits limits;
    limits.exit_wait = 300ms;
    limits.term_wait = 300ms;
    limits.stderr_lines = 5;
    return limits;
  }
  void wait_lines(std::size_t n) {
    test::run_until(io, [&] { return lines.size() >= n || exit.has_value(); });
  }
  void wait_exit() {
    test::run_until(io, [&] { return exit.has_value(); });
  }
};

// The process is gone for good: no zombie left to reap.
bool reaped(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) < 0 && errno == ECHILD;
}

}  // namespace

TEST_CASE("mcp stdio: lines both ways, the environment and directory exactly as configured", "[mcp][stdio]") {
  Server server("echo", Server::quick(), "/tmp");
  server.process->send(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  server.process->send("env");
  server.process->send("cwd");
  server.wait_lines(3);
  REQUIRE(server.lines.size() == 3);
  CHECK(server.lines[0] == R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  // Nothing of the test process's own environment: only what the command names (Python
  // adds LC_CTYPE on some systems when no locale is set).
  INFO(server.lines[1]);
  CHECK((server.lines[1] == "MCP_TEST PATH" || server.lines[1] == "LC_CTYPE MCP_TEST PATH"));
  CHECK(server.lines[2] == "/tmp");

  const pid_t pid = server.process->pid();
  server.process->stop();  // stdin closed: it exits by itself
  server.wait_exit();
  CHECK(*server.exit == "exited with status 0");
  CHECK_FALSE(server.process->running());
  CHECK(reaped(pid));
}

TEST_CASE("mcp stdio: a crash ends it with its status, nothing is written after", "[mcp][stdio]") {
  Server server("echo");
  server.process->send("exit 3");
  server.wait_exit();
  CHECK(*server.exit == "exited with status 3");
  server.process->send("anyone there?");  // dropped, no error, no SIGPIPE
  CHECK(reaped(server.process->pid()));
}

TEST_CASE("mcp stdio: an over-long line is dropped whole, junk is passed on for the session to skip", "[mcp][stdio]") {
  Server server("junk");
  server.process->send("after the junk");
  server.wait_lines(2);
  REQUIRE(server.lines.size() == 2);
  CHECK(server.lines[0] == "Server listening on stdio");
  CHECK(server.lines[1] == "after the junk");
  CHECK(server.process->stats().oversized_lines == 1);
}

TEST_CASE("mcp stdio: two megabytes on stderr stall nothing, and only a few lines are handed on", "[mcp][stdio]") {
  Server server("flood");
  server.process->send("still answering");
  server.wait_lines(1);
  REQUIRE(server.lines == std::vector<std::string>{"still answering"});
  test::run_until(server.io, [&] { return server.process->stats().stderr_dropped + 5 >= 20000; });
  const auto stats = server.process->stats();
  CHECK(stats.stderr_lines == 5);
  CHECK(stats.stderr_lines + stats.stderr_dropped == 20000);
  CHECK(server.stderr_lines.size() == 5);
  CHECK_THAT(server.stderr_lines[0], Catch::StartsWith("debug line 00000"));
}

TEST_CASE("mcp stdio: a server that ignores stdin EOF and SIGTERM is killed and reaped", "[mcp][stdio]") {
  Server server("stubborn");
  server.wait_lines(1);
  const pid_t pid = server.process->pid();
  server.process->stop();
  server.wait_exit();
  CHECK(*server.exit == "killed by signal 9");
  CHECK(reaped(pid));
}

TEST_CASE("mcp stdio: a server dropped while running is killed and reaped at once", "[mcp][stdio]") {
  pid_t pid = 0;
  {
    Server server("stubborn");
    server.wait_lines(1);
    pid = server.process->pid();
  }
  CHECK(reaped(pid));
}

TEST_CASE("mcp stdio: a program that cannot start says why", "[mcp][stdio]") {
  boost::asio::io_context io;
  const auto missing = StdioProcess::start(io, {{"/nonexistent/mcp-server"}, {}, ""}, {}, {});
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error(),
             Catch::Contains("cannot start /nonexistent/mcp-server") && Catch::Contains("No such file or directory"));
  const auto bad_dir = StdioProcess::start(io, {{"/bin/true"}, {}, "/nonexistent-dir"}, {}, {});
  REQUIRE_FALSE(bad_dir);
  CHECK_THAT(bad_dir.error(), Catch::Contains("in /nonexistent-dir"));
  CHECK_FALSE(StdioProcess::start(io, {{}, {}, ""}, {}, {}));
}

TEST_CASE("mcp stdio: a stop while lines are still being written ends cleanly", "[mcp][stdio]") {
  // The first line's write is done or in progress when stop() closes stdin: its text must
  // outlive the write, and its handler, which may find no error, must not take another line
  // off the queue stop() emptied. Short lines (written at once, the handler only queued) and
  // long ones (the pipe full, the write pending).
  const std::size_t size = GENERATE(10, 100'000);
  Server server("stubborn");
  server.wait_lines(1);
  for (int i = 0; i < 3; ++i) server.process->send(std::string(size, 'x'));
  const pid_t pid = server.process->pid();
  server.process->stop();
  server.process->send("after the stop: dropped");
  server.wait_exit();
  CHECK(reaped(pid));
}
