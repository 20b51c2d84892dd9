// What an act's tool call comes to for its outbox row (daemon/tool_lane.h), row by row.
#include <catch2/catch.hpp>

#include "daemon/tool_lane.h"

using namespace dispatchd;
using mcp::CallErrorKind;

namespace {

std::string shown(const connectors::SendOutcome& outcome) {
  struct Show {
    std::string operator()(const connectors::Sent& s) const { return "sent " + s.provider_message_id; }
    std::string operator()(const connectors::RetryAfter& r) const {
      return "retry after " + std::to_string(r.after.count()) + " ms: " + r.why;
    }
    std::string operator()(const connectors::Failed& f) const { return "failed: " + f.why; }
    std::string operator()(const connectors::Unknown& u) const { return "unknown: " + u.why; }
  };
  return std::visit(Show{}, outcome);
}

mcp::ServerCore::CallResult answered(std::string text, bool is_error) {
  mcp::ToolResult result;
  result.text = std::move(text);
  result.is_error = is_error;
  return result;
}

mcp::ServerCore::CallResult error(CallErrorKind kind, std::string message) {
  return std::unexpected(mcp::CallError{kind, std::move(message)});
}

}  // namespace

TEST_CASE("tool_outcome: a call's result as its outbox row's outcome", "[mcp][tool_lane]") {
  struct Row {
    const char* what;
    mcp::ServerCore::CallResult result;
    const char* outcome;
  };
  const Row rows[] = {
      {"answered", answered("booked", false), "sent "},
      {"answered with isError", answered("no table free", true),
       "failed: the tool answered with an error: no table free"},
      {"a JSON-RPC error", error(CallErrorKind::rejected, "Invalid params"),
       "failed: the server refused the call: Invalid params"},
      {"not pinned any more", error(CallErrorKind::disabled, "the schema changed"),
       "failed: not called: the schema changed"},
      {"never written", error(CallErrorKind::not_sent, "the MCP server is down"),
       "retry after 5000 ms: the MCP server is down"},
      {"no answer in time", error(CallErrorKind::timed_out, "deadline"),
       "unknown: no answer before the call's timeout"},
      {"lost in flight", error(CallErrorKind::unavailable, "exited with status 1"),
       "unknown: the call was in flight when: exited with status 1"},
      {"an unreadable answer", error(CallErrorKind::bad_answer, "no content"),
       "unknown: the answer could not be read: no content"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    CHECK(shown(daemon::tool_outcome(row.result)) == row.outcome);
  }
}
