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
};

class HttpClient : public ServerHandle {
 public:
  // REQUIRES: `transport` outlives the client. `on_status` and `on_log` as for StdioClient.
  HttpClient(boost::asio::io_context& io, net::Transport& transport, HttpClientSettings settings,
             std::function<void(const ServerStatus&)> on_status, std::function<void(std::string line)> on_log);
};

}  // namespace dispatchd::mcp
