#pragma once
// An MCP server as a child process: newline-delimited JSON-RPC on its stdin and stdout
// (session.h reads and writes the texts), its stderr drained into the log.
//
// - Started without a shell: argv as configured (argv[0] looked up in dispatchd's PATH),
//   the environment exactly as configured (nothing of dispatchd's own: its secrets stay
//   out), the working directory as configured, in a process group of its own (so that a
//   launcher's children, e.g. npx's node, are signalled with it).
// - Its stdout is read line by line; a line over max_line_bytes is dropped whole and
//   counted. Its stderr is always read, so a server writing megabytes there never stalls
//   on a full pipe; at most stderr_lines per stderr_window are handed on, the rest counted.
// - stop(), or the server closing its stdout, ends it: stdin is closed, then after
//   exit_wait SIGTERM, after term_wait more SIGKILL, to the whole group; once reaped (no
//   zombie is left), on_exit says how it ended. A server that dies mid-write makes the write
//   fail (the first start() ignores SIGPIPE in dispatchd, as daemons that write to pipes do).
// Callbacks run on the io_context's thread; none after the object is gone.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

namespace dispatchd::mcp {

struct StdioCommand {
  std::vector<std::string> argv;           // argv[0]: a path, or a name looked up in PATH
  std::map<std::string, std::string> env;  // the child's whole environment
  std::string cwd;                         // "" keeps dispatchd's
};

struct StdioLimits {
  std::size_t max_line_bytes = 4u << 20;
  std::size_t stderr_lines = 20;  // handed on per window; the rest counted
  std::chrono::milliseconds stderr_window{10'000};
  std::chrono::milliseconds exit_wait{2'000};  // after stdin is closed, before SIGTERM
  std::chrono::milliseconds term_wait{2'000};  // after SIGTERM, before SIGKILL
};

struct StdioCallbacks {
  std::function<void(std::string line)> on_line;    // one stdout line, without its '\n'
  std::function<void(std::string line)> on_stderr;  // one stderr line, or a count of those dropped
  std::function<void(std::string how)> on_exit;     // "exited with status 3", "killed by signal 9"
};

class StdioProcess {
 public:
  // Starts the server, or says why it could not (no such program, a bad directory, ...).
  [[nodiscard]] static std::expected<std::shared_ptr<StdioProcess>, std::string> start(boost::asio::io_context& io,
                                                                                       const StdioCommand& command,
                                                                                       const StdioLimits& limits,
                                                                                       StdioCallbacks callbacks);
  // Kills and reaps a server still running (SIGKILL to its group), without callbacks.
  ~StdioProcess();
  StdioProcess(const StdioProcess&) = delete;
  StdioProcess& operator=(const StdioProcess&) = delete;

  // Writes `line` and '\n' after the lines before it. Dropped once the server is ending.
  void send(std::string line);
  // Ends the server as described above; on_exit once it is reaped.
  void stop();

  pid_t pid() const;
  bool running() const;

  struct Stats {
    std::uint64_t lines = 0;            // stdout lines handed on
    std::uint64_t oversized_lines = 0;  // stdout lines dropped for their length
    std::uint64_t stderr_lines = 0;     // stderr lines handed on
    std::uint64_t stderr_dropped = 0;   // stderr lines over the rate, counted only
  };
  Stats stats() const;

  struct State;

 private:
  explicit StdioProcess(std::shared_ptr<State> state);
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::mcp
