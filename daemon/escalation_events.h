#pragma once
// The staff page's live feed (GET /api/events): Server-Sent Events for each change to an
// escalation, read from the audit trail after it is committed, so that a change made by
// `dispatchctl queue ... --as NAME` in another process reaches the page as well as one made
// over the API. Each event carries the audit row's id as its SSE id: a browser that
// reconnects (after a daemon restart, say) sends it back as Last-Event-ID and is sent what
// it missed, up to k_replay_limit events.
//
//   id: 42
//   event: escalation.created | escalation.updated
//   data: {"escalation_id":7,"status":"claimed","assignee":"ana","reason":"contract_failed",
//          "change":"staff_claim"}
//
// Used on the io_context's thread only.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/http_server.h"
#include "store/database.h"
#include "store/views.h"

namespace dispatchd::daemon {

// Pure: one event in the SSE wire format, ending with the blank line.
std::string sse_event(const store::EscalationEvent& event);

class EscalationEvents {
 public:
  static constexpr int k_replay_limit = 500;

  explicit EscalationEvents(store::Database& db);

  // Starts `stream` with a reconnect delay, then what it missed after `last_event_id`.
  void subscribe(std::shared_ptr<Stream> stream, std::optional<std::int64_t> last_event_id);
  // Sends the escalation events committed since the last poll to every subscriber. Call it
  // after a commit (on the daemon's tick, after a staff decision).
  void poll();
  // A comment line, so that proxies and browsers keep an idle stream open.
  void keepalive();
  std::size_t subscribers() const { return m_streams.size(); }

 private:
  void send(const std::string& bytes);
  store::Database& m_db;
  std::optional<std::int64_t> m_after;  // audit id read up to; unset until someone listens
  std::vector<std::shared_ptr<Stream>> m_streams;
};

}  // namespace dispatchd::daemon
