#pragma once
// A text/event-stream reader (Server-Sent Events, as the HTML standard defines them), for
// MCP's Streamable HTTP transport: a server answers a POST with one JSON body or with such
// a stream of JSON-RPC messages, and a dropped stream is resumed with Last-Event-ID after
// the `retry` the server asked for. Pure: chunks in (split anywhere, even inside a line or a
// CRLF), events out.
//
// Lines end with LF, CRLF or CR; a leading BOM is skipped; `:` starts a comment; a field
// without a colon has an empty value, and one space after the colon is not part of it.
// `data` lines are joined with LF; `event` names the event ("message" when absent); `id`
// sets the last event id (ignored when it holds a NUL), also for later events; `retry` of
// ASCII digits sets the reconnection delay; other fields are ignored. A blank line ends
// the event; an event without data is not dispatched.

#include <chrono>
#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dispatchd::mcp {

struct SseEvent {
  std::string type = "message";
  std::string data;
  std::string id;  // the last event id when the event ended (maybe from an earlier event)
};

class SseReader {
 public:
  // `max_event_bytes` bounds a line and an event's data: a stream that exceeds it is refused.
  explicit SseReader(std::size_t max_event_bytes = 4u << 20) : m_max(max_event_bytes) {}

  // The events that `chunk` completes, or why the stream is refused (an event too large).
  [[nodiscard]] std::expected<std::vector<SseEvent>, std::string> feed(std::string_view chunk);

  const std::string& last_event_id() const { return m_last_id; }
  // The delay the server asked for before reconnecting, when it did.
  std::optional<std::chrono::milliseconds> retry() const { return m_retry; }

 private:
  void line(std::string_view text, std::vector<SseEvent>& out);

  std::size_t m_max;
  std::string m_line;
  bool m_started = false;   // the first bytes were read (a BOM is only skipped there)
  bool m_after_cr = false;  // the last chunk ended with CR: a LF starting the next one is its CRLF
  std::string m_type;
  std::string m_data;
  bool m_has_data = false;
  std::string m_last_id;
  std::optional<std::chrono::milliseconds> m_retry;
};

}  // namespace dispatchd::mcp
