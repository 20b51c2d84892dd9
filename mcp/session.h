#pragma once
// One connection's conversation with an MCP server, without I/O: the owner feeds it what the
// server sent (on_message), the time (on_tick) and its own calls (call), and writes out the
// texts each step returns, in order. The session runs the handshake (initialize, the
// revision check, notifications/initialized), lists the server's tools page by page (again
// whenever the server announces a change), calls tools with a deadline each, answers the
// server's own requests (ping: {}, anything else: method not found), and reports what
// happened as events. Every step is a pure function of the session's state and its input,
// so a transport (stdio, Streamable HTTP) carries the texts and the tests script a server.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "mcp/pending.h"
#include "mcp/protocol.h"

namespace dispatchd::mcp {

struct SessionSettings {
  ClientInfo client;
  std::chrono::milliseconds startup_timeout{30'000};  // initialize and every tools/list page
  std::chrono::milliseconds call_timeout{30'000};     // each tools/call
  std::size_t max_result_bytes = 64 * 1024;           // a tool answer's text, kept
  std::size_t max_pages = 100;                        // of one tools/list, against endless cursors
  MessageLimits message_limits;
};

// How a call ended without a tool answer. A tool that ran and failed is not one of these:
// its answer says `is_error`.
enum class CallErrorKind {
  not_sent,     // never written: the server is down or its session not ready; the tool did not run
  unavailable,  // the connection ended with the call in flight, or its request could not be
                // delivered whole: the tool may have run
  timed_out,    // no answer before the deadline: cancellation sent, a late answer ignored
  rejected,     // the server answered with a JSON-RPC error (unknown tool, invalid arguments, ...)
  bad_answer,   // the answer is not a tools/call result
  disabled,     // never sent: the catalog action is not pinned to a compatible tool (fleet.h)
};
std::string_view to_string(CallErrorKind kind);

struct CallError {
  CallErrorKind kind = CallErrorKind::unavailable;
  std::string message;
};

// The owner's handle on one call, chosen by the owner (e.g. an action id).
using CallTag = std::uint64_t;

// The handshake is done and the tools are listed (the first time, and after each change).
struct ToolsListed {
  ServerHello hello;
  std::string_view protocol_version;  // the revision spoken
  std::vector<Tool> tools;            // every page's tools, in the server's order
};
// A call ended.
struct CallDone {
  CallTag tag = 0;
  std::expected<ToolResult, CallError> result;
};
// The session cannot go on (no revision in common, initialize refused or unanswered, the
// tool list unreadable or endless): the owner drops the connection and may start another.
struct SessionFailed {
  std::string why;
};
using SessionEvent = std::variant<ToolsListed, CallDone, SessionFailed>;

// What one step asks of the owner: texts to send, in order, then events to handle.
struct Step {
  std::vector<std::string> send;
  std::vector<SessionEvent> events;
};

class Session {
 public:
  using Clock = Pending::Clock;
  // idle -> initializing (the handshake and the first tool listing) -> ready (calls go out;
  // a listing after a change runs beside them) -> failed or closed, for good.
  enum class State { idle, initializing, ready, failed, closed };

  explicit Session(SessionSettings settings);

  // Sends `initialize`. REQUIRES: state() == idle.
  Step start(Clock::time_point now);
  // One message from the server (a stdio line, an HTTP body or SSE event's data).
  Step on_message(std::string_view text, Clock::time_point now);
  // Deadlines: requests unanswered by `now` are given up (cancelled; a call ends timed_out;
  // the handshake or a listing fails the session).
  Step on_tick(Clock::time_point now);
  // Calls `tool`. While the session is not ready the call ends at once as unavailable.
  Step call(CallTag tag, std::string_view tool, std::string_view arguments_json, std::string_view idempotency_key,
            Clock::time_point now);
  // The transport could not deliver request `id` or get its answer (HTTP: a refused POST, no
  // answer): a call ends with `error` at once, rather than at its deadline; the handshake or
  // a listing fails the session. Nothing happens for an id that no longer waits.
  Step undeliverable(RequestId id, const CallError& error);
  // The connection is gone: every call in flight ends unavailable; the session is closed.
  Step close(std::string_view why);

  State state() const { return m_state; }
  // The revision spoken once the server's initialize answer was accepted; "" before.
  std::string_view protocol_version() const { return m_version; }
  std::optional<Clock::time_point> next_deadline() const { return m_pending.next_deadline(); }

  struct Stats {
    std::uint64_t skipped_messages = 0;  // not JSON-RPC, or an answer to nothing
    std::uint64_t late_answers = 0;      // answers after their deadline, ignored
    std::uint64_t server_requests = 0;   // answered with {} or method not found
    std::uint64_t list_changes = 0;      // notifications/tools/list_changed
  };
  const Stats& stats() const { return m_stats; }

 private:
  void fail(Step& step, std::string why);
  void end_calls(Step& step, const std::string& why);
  void start_listing(Step& step, Clock::time_point now);
  void request_page(Step& step, Clock::time_point now);
  void on_answer(Step& step, const Message& message, Clock::time_point now);
  void on_initialize_answer(Step& step, const Message& message, Clock::time_point now);
  void on_page(Step& step, const Message& message, Clock::time_point now);

  SessionSettings m_settings;
  State m_state = State::idle;
  Pending m_pending;
  Stats m_stats;
  ServerHello m_hello;
  std::string_view m_version;
  std::map<RequestId, CallTag> m_calls;  // tools/call requests in flight
  // The listing in progress (if any): its pages so far, the cursors seen, and whether a
  // change announced meanwhile asks for another listing once it ends.
  bool m_listing_active = false;
  std::vector<Tool> m_listing;
  std::set<std::string> m_cursors;
  std::optional<std::string> m_cursor;
  std::size_t m_pages = 0;
  bool m_relist = false;
};

}  // namespace dispatchd::mcp
