#include "daemon/escalation_events.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/json_out.h"

namespace dispatchd::daemon {
namespace {

constexpr int k_poll_limit = 1000;  // events per poll; the rest wait for the next one

}  // namespace

std::string sse_event(const store::EscalationEvent& event) {
  JsonOut out;
  out.begin_object()
      .field("escalation_id", event.escalation_id)
      .field("status", store::to_sql(event.status))
      .field("assignee", event.assignee)
      .field("reason", store::to_sql(event.reason));
  // What changed, so that a page showing the case knows to read its notes or hand-overs again.
  if (event.change) out.field("change", store::to_sql(*event.change));
  const std::string data = out.end_object().str();
  return "id: " + std::to_string(event.audit_id) +
         "\nevent: " + (event.created ? "escalation.created" : "escalation.updated") + "\ndata: " + data + "\n\n";
}

EscalationEvents::EscalationEvents(store::Database& db) : m_db(db) {}

void EscalationEvents::subscribe(std::shared_ptr<Stream> stream, std::optional<std::int64_t> last_event_id) {
  if (!m_after) {
    auto last = store::last_audit_id(m_db);
    if (!last) {
      spdlog::warn("staff events: cannot read the audit trail: {}", last.error().message);
      stream->close();
      return;
    }
    m_after = *last;
  }
  std::string start = "retry: 2000\n\n";
  if (last_event_id && *last_event_id < *m_after) {
    auto missed = store::escalation_events(m_db, *last_event_id, *m_after, k_replay_limit);
    if (missed) {
      for (const auto& event : *missed) start += sse_event(event);
    }
  }
  if (stream->write(std::move(start))) m_streams.push_back(std::move(stream));
}

void EscalationEvents::poll() {
  if (!m_after) return;
  std::erase_if(m_streams, [](const auto& stream) { return !stream->open(); });
  if (m_streams.empty()) {
    m_after.reset();  // nobody listens: start again from the end at the next subscriber
    return;
  }
  // Up to the newest row read first, so that the next poll starts after rows with no
  // escalation event instead of reading them again.
  auto last = store::last_audit_id(m_db);
  auto events = last ? store::escalation_events(m_db, *m_after, *last, k_poll_limit) : std::unexpected(last.error());
  if (!events) {
    spdlog::warn("staff events: cannot read the audit trail: {}", events.error().message);
    return;
  }
  m_after = events->size() == static_cast<std::size_t>(k_poll_limit) ? events->back().audit_id : *last;
  if (events->empty()) return;
  std::string bytes;
  for (const auto& event : *events) bytes += sse_event(event);
  send(bytes);
}

void EscalationEvents::keepalive() { send(": keepalive\n\n"); }

void EscalationEvents::send(const std::string& bytes) {
  std::erase_if(m_streams, [&](const auto& stream) { return !stream->write(bytes); });
}

}  // namespace dispatchd::daemon
