#pragma once
// Read-only catalog tools (kind "http"): the URL template filled with the percent-encoded
// values of the validated reply, a GET with a timeout, and an answer capped in size, fed
// back to the model as text whatever happened (a failure is information too).

#include <chrono>
#include <cstddef>
#include <expected>
#include <functional>
#include <string>

#include "catalog/catalog.h"
#include "net/http.h"

namespace dispatchd::agent {

// RFC 3986 percent-encoding of everything but unreserved characters (text::percent_encode).
std::string percent_encode(std::string_view value);

// Fills every {field} of the action's URL from `output` (the verdict's compact JSON).
// Non-string values are written as their JSON text. Fails on a placeholder with no value.
std::expected<std::string, std::string> tool_url(const catalog::Action& action, const std::string& output);

struct ToolLimits {
  std::size_t max_bytes = 8 * 1024;
  std::chrono::milliseconds timeout{10'000};
};

// Runs the tool; `done` gets the text for the model (never an error: failures are described).
void run_tool(net::Transport& transport, const std::string& url, const ToolLimits& limits,
              std::move_only_function<void(std::string)> done);

}  // namespace dispatchd::agent
