#pragma once
// One configured MCP server over stdio, kept connected on the event loop: the child process
// (stdio_process.h) and the conversation (session.h) joined, the session's deadlines on a
// timer, the tools listed, calls made with a deadline each. When the server exits, crashes
// or the session fails, its calls in flight fail `unavailable` and it is started again after
// a backoff (1 s doubling to a minute, from the first failure in a row; a session that got
// ready resets the count). Everything runs on the io_context's thread.

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/backoff.h"
#include "mcp/server_core.h"
#include "mcp/session.h"
#include "mcp/stdio_process.h"

namespace dispatchd::mcp {

struct StdioClientSettings {
  std::string name;  // the server's name in the configuration, for logs
  StdioCommand command;
  StdioLimits limits;
  SessionSettings session;
  Backoff restart{std::chrono::seconds(1), std::chrono::seconds(60)};
};

class StdioClient : public ServerHandle {
 public:
  // `on_status` is called on every change (listed, down); `on_log` with one line for the
  // log (a stderr line of the server, a restart), never with a secret of dispatchd's.
  StdioClient(boost::asio::io_context& io, StdioClientSettings settings,
              std::function<void(const ServerStatus&)> on_status, std::function<void(std::string line)> on_log);
};

}  // namespace dispatchd::mcp
