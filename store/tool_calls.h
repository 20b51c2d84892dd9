#pragma once
// Catalog tool calls: one row per call a message made (kind http or mcp), in order, with what
// became of it (v_tool_calls; docs/sql.md). Neither what was sent nor what came back is kept:
// the attempt that asked for the call holds the arguments, and the answer went to the model.

#include <cstdint>
#include <optional>
#include <string>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/states.h"

namespace dispatchd::store {

struct ToolCallRecord {
  std::int64_t message_id = 0;
  // The attempt whose valid output asked for the call; 0: the message's latest (an act call,
  // made by the outbox after the decision, or after staff approved it).
  int attempt = 1;
  std::string action;
  ToolKind kind = ToolKind::http;
  std::optional<std::string> server;  // mcp: the configured server's name
  std::string tool;                   // mcp: the tool's name; http: the catalog's URL template
  ToolOutcome outcome = ToolOutcome::ok;
  std::int64_t duration_ms = 0;
  std::int64_t result_bytes = 0;
  std::optional<std::int64_t> action_id;  // an act call's outbox row
};

// Stores the call and its 'tool_call' audit event in one transaction.
[[nodiscard]] Result<std::int64_t> record_tool_call(Database& db, const ToolCallRecord& call, Time now);

}  // namespace dispatchd::store
