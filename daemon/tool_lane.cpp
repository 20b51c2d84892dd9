#include "daemon/tool_lane.h"

#include <spdlog/spdlog.h>
#include <memory>

#include "agent/tools.h"

namespace dispatchd::daemon {

connectors::SendOutcome tool_outcome(const mcp::ServerCore::CallResult& result) {
  using mcp::CallErrorKind;
  if (result) {
    if (result->is_error) return connectors::Failed{"the tool answered with an error: " + result->text};
    return connectors::Sent{""};
  }
  const auto& error = result.error();
  switch (error.kind) {
    case CallErrorKind::rejected: return connectors::Failed{"the server refused the call: " + error.message};
    case CallErrorKind::disabled: return connectors::Failed{"not called: " + error.message};
    case CallErrorKind::not_sent: return connectors::RetryAfter{std::chrono::seconds(5), error.message};
    case CallErrorKind::timed_out: return connectors::Unknown{"no answer before the call's timeout"};
    case CallErrorKind::unavailable: return connectors::Unknown{"the call was in flight when: " + error.message};
    case CallErrorKind::bad_answer: return connectors::Unknown{"the answer could not be read: " + error.message};
  }
  return connectors::Unknown{error.message};
}

ToolLane::ToolLane(mcp::Fleet& fleet, store::Database& db, std::function<store::Time()> now,
                   std::function<void(const store::ToolCallRecord&)> on_call)
    : m_fleet(fleet), m_db(db), m_now(std::move(now)), m_on_call(std::move(on_call)) {}

void ToolLane::send(const store::OutboxItem& item, connectors::SendDone done) {
  store::ToolCallRecord record{.message_id = item.message_id,
                               .attempt = 0,  // the message's latest: the one that decided
                               .action = item.action,
                               .kind = store::ToolKind::mcp,
                               .server = item.tool_server,
                               .tool = item.tool_name,
                               .action_id = item.id};
  // The fleet's callback is copyable; the pump's is not.
  auto shared_done = std::make_shared<connectors::SendDone>(std::move(done));
  m_fleet.call_tool(item.action, item.tool_server, item.tool_name, item.body, item.idempotency_key,
                    [this, record = std::move(record), started = std::chrono::steady_clock::now(),
                     shared_done](mcp::ServerCore::CallResult result) mutable {
                      const auto answer = agent::mcp_answer(result);
                      agent::note_answer(record, answer, started);
                      // The row's own outcome is what counts (the pump writes it); this record
                      // is for the audit and the SQL view, and a failure to write it is logged.
                      if (auto stored = store::record_tool_call(m_db, record, m_now()); !stored)
                        spdlog::error("tool call of action {}: not recorded: {}", record.action_id.value_or(0),
                                      stored.error().message);
                      else if (m_on_call)
                        m_on_call(record);
                      (*shared_done)(tool_outcome(result));
                    });
}

}  // namespace dispatchd::daemon
