#pragma once
// MCP's Streamable HTTP transport as requests and answers, without I/O: every client
// message is one POST to the server's endpoint; the server answers a request with one JSON
// body or with a text/event-stream of messages (its last one the answer), a notification
// or a response with 202 and no body. net::Transport carries the exchange.
//
// Headers sent: Content-Type application/json; Accept "application/json, text/event-stream";
// Authorization "Bearer <token>" when the server has a token (from a credential, never
// logged); Mcp-Session-Id once the server gave one in its initialize answer; and
// MCP-Protocol-Version, the revision spoken, on every request after initialize.
//
// Resuming (the 2025-11-25 revision's "Resumability and Redelivery"): a server may end a
// POST's event stream before the answer, once it sent an event with an id, and tell the
// client how long to wait (`retry`). The client then waits that long (k_default_resume_delay
// when the server said nothing, at most k_max_resume_delay) and GETs the endpoint with
// Last-Event-ID; that GET's event stream carries the rest, the answer among it, and may
// stay open after it, so it is read as it arrives (StreamedAnswer, over net's streamed
// bodies) and dropped once the answer is in. A stream that ends again without the answer is
// resumed again from its own last id, up to the client's limit (next_resume). The POST's own
// answer is read whole: the client needs its end to know the answer is not in it.

#include <chrono>
#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/protocol.h"
#include "mcp/sse.h"
#include "net/http.h"

namespace dispatchd::mcp {

struct HttpEndpoint {
  std::string url;    // the server's MCP endpoint, e.g. http://127.0.0.1:3001/mcp
  std::string token;  // "" when the server takes none
  std::chrono::milliseconds timeout{30'000};
};

// What the client carries from one request to the next.
struct HttpSessionState {
  std::string session_id;        // "" until the initialize answer gives one
  std::string protocol_version;  // "" until negotiated
};

// The POST of one message; `initialize` leaves out MCP-Protocol-Version (not negotiated yet).
net::HttpRequest post_message(const HttpEndpoint& endpoint, const HttpSessionState& state, std::string message,
                              bool initialize);
// The DELETE that ends the session at shutdown (REQUIRES: a session id).
net::HttpRequest delete_session(const HttpEndpoint& endpoint, const HttpSessionState& state);
// The GET that resumes an event stream after `last_event_id`: Accept text/event-stream,
// Last-Event-ID, and the token, session id and revision as on a POST. The caller sets
// on_body (StreamedAnswer) to read it as it arrives.
net::HttpRequest resume_stream(const HttpEndpoint& endpoint, const HttpSessionState& state,
                               const std::string& last_event_id);

enum class HttpOutcomeKind {
  messages,         // 2xx with JSON-RPC messages for the session (one JSON body, or an event stream)
  accepted,         // 202 (or 2xx with no body): nothing to read
  session_expired,  // the server no longer knows the session (404, or a 400 that says so): initialize again, once
  unauthorized,     // 401 or 403: the token is missing, wrong or not allowed; never retried by itself
  unavailable,      // no answer, 429 or 5xx: the request may be tried again later
  refused,          // any other answer: this request will not succeed as it is
};

struct HttpOutcome {
  HttpOutcomeKind kind = HttpOutcomeKind::refused;
  std::vector<std::string> messages;               // kind messages: JSON-RPC texts, in order
  std::optional<std::string> session_id;           // Mcp-Session-Id of the answer, when it has one
  std::string why;                                 // every kind but messages and accepted: one line
  std::optional<std::chrono::milliseconds> retry;  // an event stream's `retry`
  std::string last_event_id;                       // an event stream's last id, for resuming
  bool event_stream = false;                       // kind messages: an event stream, ended
};

// What `result`, the answer to a POST, means. `had_session`: the request carried a session
// id (only then is a 404 the session's end rather than a wrong URL).
HttpOutcome read_http_answer(const net::HttpResult& result, bool had_session);

// Whether `message`, a JSON-RPC text from the server, answers (result or error) request `id`.
bool answers(std::string_view message, RequestId id);

// The answer to a GET that resumes a stream, read as it arrives: the server may hold that
// stream open after the answer, so the client cannot wait for its end. Single-threaded.
class StreamedAnswer {
 public:
  // A chunk of the body of the answer `head` (its status and headers). Returns the JSON-RPC
  // messages the chunk completes, in order. Nothing while the answer is not a 2xx event
  // stream (its first bytes are kept for finish(), to say why) or once the stream is refused.
  std::vector<std::string> feed(const net::HttpResponse& head, std::string_view chunk);
  // The stream holds an event over the reader's limit: stop it; finish() says why.
  bool refused() const { return m_refusal.has_value(); }
  // What the answer meant once the exchange ended; `result` as the transport gave it (its
  // body: what was not streamed, all of it from a transport that does not stream). An event
  // stream is kind messages, event_stream set, holding only the messages feed() did not
  // return, with its last id and retry; anything else as read_http_answer() reads it.
  HttpOutcome finish(const net::HttpResult& result, bool had_session);

 private:
  enum class Body { unknown, events, other };
  Body m_body = Body::unknown;
  SseReader m_reader;
  std::string m_kept;  // the start of a body that is not an event stream
  std::optional<std::string> m_refusal;
};

// Where a request's stream stopped, carried from one resume to the next.
struct StreamPosition {
  std::string last_event_id;
  std::optional<std::chrono::milliseconds> retry;
  int resumes = 0;  // GETs sent so far for the request
};

inline constexpr std::chrono::milliseconds k_default_resume_delay{1'000};
inline constexpr std::chrono::milliseconds k_max_resume_delay{30'000};

// An event stream ended (`ended`: kind messages, event_stream) without the answer to its
// request: how long to wait before the next GET, with `at` moved on (the stream's last id and
// retry kept when it sent new ones, one more resume counted). Refused, saying why, when no
// event id was ever sent (nothing to resume from) or `max_resumes` GETs were sent already.
[[nodiscard]] std::expected<std::chrono::milliseconds, std::string> next_resume(StreamPosition& at,
                                                                                const HttpOutcome& ended,
                                                                                int max_resumes);

}  // namespace dispatchd::mcp
