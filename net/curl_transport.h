#pragma once
// The real Transport: libcurl's multi interface driven by a Boost.Asio io_context. curl
// tells us which sockets to watch and when its timer expires; Asio waits for those
// events, so any number of requests are in flight on the thread that runs the
// io_context, with no thread per request.
//
// Thread-safety: send() may be called from any thread; all curl work and every callback
// run on one strand of the io_context. Destroy the transport on a thread that runs the
// io_context, or when no thread runs it; in-flight requests are then abandoned without
// calling their callbacks.

#include <cstddef>
#include <memory>
#include <string>

#include "net/http.h"

namespace boost::asio {
class io_context;
}

namespace dispatchd::net {

struct CurlTransportOptions {
  // Bodies beyond this fail with too_large; the transfer stops as soon as it passes it.
  std::size_t max_response_bytes = 8u << 20;
  std::string user_agent = "dispatchd";
  // Connections curl's cache may hold, in use or idle. Without a fixed number curl allows
  // four per request in flight at the moment a transfer ends, and so closes connections
  // whenever the load dips, only to open new ones on the next burst. Below the requests in
  // flight, every finished transfer closes its connection (the cache is full of busy ones)
  // and the next opens a new one: size it to the most requests in flight (the daemon: its
  // model permits plus room for the channels).
  long max_idle_connections = 256;
};

class CurlTransport final : public Transport {
 public:
  // Throws std::runtime_error when libcurl cannot be initialised (a start-up failure).
  explicit CurlTransport(boost::asio::io_context& io, CurlTransportOptions options = {});
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  // Redirects are not followed; proxies follow curl's usual environment variables.
  void send(HttpRequest request, HttpCallback done) override;

 private:
  struct Impl;
  std::shared_ptr<Impl> m_impl;
};

}  // namespace dispatchd::net
