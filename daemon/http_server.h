#pragma once
// The one HTTP listener (Boost.Beast, in the shape of Beast's examples: an acceptor and one
// session object per connection, a deadline on every step). Limits: header and body size
// (431 and 413 before the handler runs), a first-byte deadline (a connection that sends
// nothing is dropped soon), a read deadline (a slow client is dropped), an idle deadline
// between keep-alive requests, and connection caps, in all and per client address. Past
// the per-address cap a client gets one 503 and is closed: one address cannot hold every
// slot. At the global cap a new client takes the slot of the connection that has waited
// longest for its own client (idle, dribbling a request, or between kept-alive requests),
// so idle connections from many addresses cannot lock real clients out either; only when
// every slot is answering a request does the new client get the 503. The listener never
// holds more than max_connections sockets (plus the ones being refused), whatever the flood.
//
// A handler may also answer with a response that stays open (Response::on_stream), which
// the listener closes when it stops.
//
// Handlers run on the io_context's thread and answer through `respond`, exactly once, at
// once or later: a channel's webhook endpoint answers after the group commit that stores
// its events (connectors/channel.h). The connection waits for the answer.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace dispatchd::daemon {

struct HttpLimits {
  std::size_t max_header_bytes = 8 * 1024;
  std::size_t max_body_bytes = 1024 * 1024;
  std::chrono::seconds first_byte_timeout{3};  // from accept to the first byte of the first request
  std::chrono::seconds read_timeout{10};       // one whole request, headers and body
  std::chrono::seconds idle_timeout{60};       // between requests on a kept-alive connection
  std::size_t max_connections = 512;           // the process's descriptor limit must exceed it (1024 by default)
  std::size_t max_connections_per_address = 64;
};

struct Request {
  std::string method;
  std::string path;                                          // without the query
  std::string query;                                         // after '?', undecoded
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;                                          // the raw bytes as received

  std::optional<std::string_view> header(std::string_view lower_name) const;
};

// The sending end of a response that stays open (Server-Sent Events). Used on the
// io_context's thread only.
class Stream {
 public:
  virtual ~Stream() = default;
  // Queues `bytes` for the client; false (and nothing queued) once the connection is gone,
  // or when the client falls more than a bound behind (then the connection is closed).
  virtual bool write(std::string bytes) = 0;
  virtual bool open() const = 0;
  virtual void close() = 0;
};

struct Response {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;
  // Set for a response that stays open: the head is written without a length (the body
  // ends when the connection does), `body` is ignored, and `on_stream` is then handed the
  // connection's Stream. Each write has the read deadline; a peer that closes ends it.
  std::function<void(std::shared_ptr<Stream>)> on_stream;
};

using Respond = std::function<void(Response)>;
using Handler = std::function<void(const Request&, Respond)>;

// A Handler for handlers that answer at once.
Handler answer_now(std::function<Response(const Request&)> handler);

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, HttpLimits limits, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts accepting; port 0 picks a free one (see port()).
  [[nodiscard]] std::expected<void, std::string> listen(const std::string& host, std::uint16_t port);
  std::uint16_t port() const;
  // Stops accepting; open connections finish the request they are in, then close.
  void stop();
  // These two may be read from any thread (daemon/http_front.h reads them from the loop).
  std::size_t connections() const;
  // Requests read and handed to the handler whose answer is not yet written: a draining
  // daemon waits for these (a webhook is answered only after its commit).
  std::size_t answering() const;

  struct State;  // opaque; public only so that the sessions in the .cpp can share it

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::daemon
