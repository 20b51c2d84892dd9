#pragma once
// The outbox lane of tool calls (store::k_tool_lane): an outbox row that an mcp action with
// "use": "act" decided is made through the MCP servers (mcp/fleet.h) as a send is made
// through a channel, by the same pump (daemon/outbox_pump.h) and with its guarantees: the
// call leaves only once the row's 'sending' is durable, its idempotency key rides in the
// request's `_meta`, and its outcome is written once. A call the process did not see the
// end of (a crash, a SIGKILL) is 'unknown' at the next start, never made again.
//
// What a call's result means for the row (tool_outcome, pure):
//   the tool answered                  Sent (its follow-up reply is then queued)
//   answered with isError              Failed: a tool_failed escalation with the tool's text
//   a JSON-RPC error                   Failed
//   not made: the action not pinned    Failed, saying why (its server changed its schema,
//                                      the catalog changed its tool)
//   never written: the server is down  RetryAfter 5 s: the tool did not run
//   timed out, lost in flight, an      Unknown: a delivery_unknown escalation; it may
//   unreadable answer                  have run, so it is not made again by itself
// Each call is also recorded in v_tool_calls (with its outbox row) and the audit trail.

#include <chrono>
#include <functional>
#include <string_view>

#include "connectors/channel.h"
#include "mcp/fleet.h"
#include "store/database.h"
#include "store/tool_calls.h"

namespace dispatchd::daemon {

// What the call's result means for its outbox row (the table above).
connectors::SendOutcome tool_outcome(const mcp::ServerCore::CallResult& result);

class ToolLane final : public connectors::Channel {
 public:
  // REQUIRES: `fleet` and `db` outlive the lane. `on_call` (may be null) hears of every
  // call recorded, for metrics.
  ToolLane(mcp::Fleet& fleet, store::Database& db, std::function<store::Time()> now,
           std::function<void(const store::ToolCallRecord&)> on_call);

  std::string_view name() const override { return store::k_tool_lane; }
  void send(const store::OutboxItem& item, connectors::SendDone done) override;
  // A tool call cannot be looked up afterwards: an unknown one stays unknown.
  bool resolve_unknown(const store::OutboxItem&, connectors::SendDone&) override { return false; }
  connectors::Health health() const override { return {}; }
  connectors::WebhookEndpoint* webhook() override { return nullptr; }
  void stop() override {}

 private:
  mcp::Fleet& m_fleet;
  store::Database& m_db;
  std::function<store::Time()> m_now;
  std::function<void(const store::ToolCallRecord&)> m_on_call;
};

}  // namespace dispatchd::daemon
