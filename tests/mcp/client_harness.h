#pragma once
// Test support for the MCP clients: one call, with the loop run until its answer comes.

#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "mcp/server_core.h"
#include "tests/io_run.h"

namespace dispatchd::test {

inline mcp::ServerHandle::CallResult call_and_wait(boost::asio::io_context& io, mcp::ServerHandle& server,
                                                   const std::string& tool, const std::string& args) {
  std::optional<mcp::ServerHandle::CallResult> result;
  server.call(tool, args, "", [&](mcp::ServerHandle::CallResult r) { result = std::move(r); });
  run_until(io, [&] { return result.has_value(); });
  return std::move(*result);
}

}  // namespace dispatchd::test
