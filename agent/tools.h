#pragma once
// Catalog tools whose answer goes back to the model: kind "http" (the URL template filled
// with the percent-encoded values of the validated reply, a GET with a timeout, an answer
// capped in size) and kind "mcp" with use "lookup" (the reply's fields as the tool's
// arguments, through mcp::ToolCaller). Either way the model gets text whatever happened (a
// failure is information too), and the audit gets what became of the call (ToolAnswer).

#include <chrono>
#include <cstddef>
#include <expected>
#include <functional>
#include <string>

#include "catalog/catalog.h"
#include "mcp/server_core.h"
#include "net/http.h"
#include "store/states.h"
#include "store/tool_calls.h"

namespace dispatchd::agent {

// RFC 3986 percent-encoding of everything but unreserved characters (text::percent_encode).
std::string percent_encode(std::string_view value);

// Fills every {field} of the action's URL from `output` (the verdict's compact JSON).
// Non-string values are written as their JSON text. Fails on a placeholder with no value.
[[nodiscard]] std::expected<std::string, std::string> tool_url(const catalog::Action& action,
                                                               const std::string& output);

// The arguments object an mcp action sends: each field it uses that is set (not null) in
// the validated reply `output`, under its argument name (catalog::McpTool::argument_of).
[[nodiscard]] std::expected<std::string, std::string> tool_arguments(const catalog::Catalog& catalog,
                                                                     const catalog::Action& action,
                                                                     const std::string& output);

// What a tool call came to: the text for the model, and for the audit (v_tool_calls).
struct ToolAnswer {
  std::string text;
  store::ToolOutcome outcome = store::ToolOutcome::ok;
  std::size_t result_bytes = 0;  // the answer's size as received (before any cut)
};

// Fills `record` (v_tool_calls) with what the call came to and how long it took since `started`.
void note_answer(store::ToolCallRecord& record, const ToolAnswer& answer,
                 std::chrono::steady_clock::time_point started);

// What an MCP call's result tells the model and the audit. A tool that ran and failed
// (isError) is tool_error, with its text; a call that never got an answer says why.
ToolAnswer mcp_answer(const mcp::ServerCore::CallResult& result);

struct ToolLimits {
  std::size_t max_bytes = 8 * 1024;
  std::chrono::milliseconds timeout{10'000};
};

// Runs the http tool; `done` gets its answer (never an error: failures are described).
void run_tool(net::Transport& transport, const std::string& url, const ToolLimits& limits,
              std::move_only_function<void(ToolAnswer)> done);

}  // namespace dispatchd::agent
