#pragma once
// One configured MCP server over Streamable HTTP (http_exchange.h) through net::Transport:
// each message the session sends is one POST; answers (JSON or an event stream) go back to
// the session. The session id the initialize answer gives rides on every later request, and
// the negotiated revision after initialize. When the server says the session is gone (404,
// or a 400 naming it), the session starts over at once, one time in a row; calls in flight
// then fail `unavailable`. A refused token (401, 403) leaves the server down until stop():
// retrying cannot fix a credential. Otherwise a server that fails (no answer, 5xx, a failed
// session) is started again after a backoff, as over stdio. stop() DELETEs the session.
// Everything runs on the io_context's thread; the transport answers there.
//
// An event stream that ends before the answer to its request is resumed (http_exchange.h):
// after the server's `retry` (or k_default_resume_delay), a GET with Last-Event-ID whose
// stream is read as it arrives, each message handed to the session at once, and let go as
// soon as the answer is in, even when the server holds it open. At most `max_resumes` GETs a
// request; a stream that cannot be resumed (no event id, the limit reached, the GET refused)
// ends its call `unavailable` at once (the handshake or a listing: the session fails and
// restarts). Limits: a resuming GET that stays silent without the answer is held until its
// own `endpoint.timeout` (its call ends at its deadline before); a GET is only ever sent to
// resume a request's stream, never opened to listen for the server's own messages; and a
// POST's answer is read whole, so a server that holds a POST's stream open after the answer
// delivers that answer only when it closes the stream (or at the timeout).

#include <memory>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "common/backoff.h"
#include "mcp/http_exchange.h"
#include "mcp/server_core.h"
#include "mcp/session.h"
#include "net/http.h"

namespace dispatchd::mcp {

struct HttpClientSettings {
  std::string name;  // the server's name in the configuration, for logs
  HttpEndpoint endpoint;
  SessionSettings session;
  Backoff restart{std::chrono::seconds(1), std::chrono::seconds(60)};
  int max_resumes = 3;  // resuming GETs per request (see above)
};

class HttpClient : public ServerHandle {
 public:
  // REQUIRES: `transport` outlives the client. `on_status` and `on_log` as for StdioClient.
  HttpClient(boost::asio::io_context& io, net::Transport& transport, HttpClientSettings settings,
             std::function<void(const ServerStatus&)> on_status, std::function<void(std::string line)> on_log);
};

}  // namespace dispatchd::mcp
