#pragma once
// What a configured MCP server's client does whatever carries its messages (stdio_client.h,
// http_client.h): the session and its deadline timer, the calls in flight, the status the
// owner hears, restarts after a backoff. A transport derives from it and says how to open
// a connection, send a text, and close; everything runs on the io_context's thread.

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/backoff.h"
#include "mcp/session.h"

namespace dispatchd::mcp {

// What the owner hears of the server: up with its tools (after each listing), or down and why.
struct ServerStatus {
  bool up = false;
  std::string why;  // down: the last reason ("exited with status 1", "initialize unanswered ...")
  std::string protocol_version;
  std::string server_name;
  std::vector<Tool> tools;
  int restarts = 0;  // starts after the first
};

class ServerCore : public std::enable_shared_from_this<ServerCore> {
 public:
  using CallResult = std::expected<ToolResult, CallError>;
  using Done = std::function<void(CallResult)>;

  struct Settings {
    std::string name;  // the server's name in the configuration, for logs
    SessionSettings session;
    Backoff restart{std::chrono::seconds(1), std::chrono::seconds(60)};
  };

  ServerCore(boost::asio::io_context& io, Settings settings, std::function<void(const ServerStatus&)> on_status,
             std::function<void(std::string)> on_log);
  virtual ~ServerCore() = default;
  ServerCore(const ServerCore&) = delete;
  ServerCore& operator=(const ServerCore&) = delete;

  // Opens a connection and starts a session on it (again after a failure, after the backoff).
  void launch();
  // A call: `done` runs once, on the loop (posted at once while the server is down).
  void call(std::string_view tool, std::string_view arguments_json, std::string_view idempotency_key, Done done);
  // For good: calls in flight fail unavailable, the connection is closed, no restart.
  void stop();
  // The owner is gone: no callback from here on, no restart; the transport lets go at once.
  void abandon();

  const ServerStatus& status() const { return m_status; }

 protected:
  // The transport's part. open(): a new connection, or false after calling down() with why.
  virtual bool open() = 0;
  // One text of the session, in order; `initialize` for the session's first.
  virtual void send_text(std::string text, bool initialize) = 0;
  // stop(): the connection is to end (its session is already closed).
  virtual void close() = 0;
  // abandon(): let go of everything now, no callback.
  virtual void drop() = 0;
  // The session cannot go on. By default the server is down and restarted after the backoff;
  // a transport whose connection must end first (a process to stop) overrides it.
  virtual void on_session_failed(const std::string& why) { down(why, true); }

  // Carries a step out: its texts through send_text, its events to the owner.
  void apply(Step step, bool initialize = false);
  // Closes the session (its calls fail with `why`; its answers still to come are ignored).
  void end_session(const std::string& why);
  // The server is down: the session ended, the owner told, a restart after the backoff when `retry`.
  void down(std::string why, bool retry);
  void log(std::string line);

  Session* session() { return m_session.get(); }
  boost::asio::io_context& io() { return m_io; }
  bool stopped() const { return m_stopped; }
  // Changes whenever a session ends or starts: answers and callbacks of an older one are ignored.
  std::uint64_t generation() const { return m_generation; }
  ServerStatus& mutable_status() { return m_status; }
  const std::string& name() const { return m_settings.name; }

 private:
  void arm_deadline();
  void finish(CallTag tag, CallResult result);

  boost::asio::io_context& m_io;
  Settings m_settings;
  std::function<void(const ServerStatus&)> m_on_status;
  std::function<void(std::string)> m_on_log;
  boost::asio::steady_timer m_deadline;
  boost::asio::steady_timer m_restart;
  std::unique_ptr<Session> m_session;
  std::map<CallTag, Done> m_calls;
  CallTag m_next_tag = 1;
  ServerStatus m_status;
  int m_failures_in_a_row = 0;
  bool m_started_once = false;
  bool m_stopped = false;
  std::uint64_t m_generation = 0;
};

// The owner's handle on one server, whatever its transport (StdioClient, HttpClient): start,
// calls, stop and the status. Destroying it lets go at once: no callback afterwards, calls
// still in flight dropped uncalled, a child process killed and reaped.
class ServerHandle {
 public:
  using CallResult = ServerCore::CallResult;
  using Done = ServerCore::Done;

  ~ServerHandle();
  ServerHandle(const ServerHandle&) = delete;
  ServerHandle& operator=(const ServerHandle&) = delete;

  // Starts the server (and keeps it started, after failures too, until stop()).
  void start();
  // Calls `tool`; `done` runs once, on the loop (posted at once when the server is down).
  void call(std::string_view tool, std::string_view arguments_json, std::string_view idempotency_key, Done done);
  // Ends the server for good: calls in flight fail unavailable, the connection is closed.
  void stop();
  const ServerStatus& status() const;

 protected:
  explicit ServerHandle(std::shared_ptr<ServerCore> core);

 private:
  std::shared_ptr<ServerCore> m_core;
};

}  // namespace dispatchd::mcp
