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

#include <chrono>
#include <optional>
#include <string>
#include <vector>

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
};

// What `result`, the answer to a POST, means. `had_session`: the request carried a session
// id (only then is a 404 the session's end rather than a wrong URL).
HttpOutcome read_http_answer(const net::HttpResult& result, bool had_session);

}  // namespace dispatchd::mcp
