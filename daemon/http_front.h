#pragma once
// The listener as the daemon runs it: an HttpServer (daemon/http_server.h) either on the
// loop itself or on a thread of its own.
//
// Why a thread: on PostgreSQL every store call is a round trip over the network, and the
// loop that makes it waits for the answer. With the listener on its own thread, requests
// are still accepted, read under their deadlines and refused in time while the loop waits
// (or while it tries to reconnect to a server that went away). Each request is handed to
// the loop's handler by post and its answer posted back; a response that stays open
// (Server-Sent Events) is written through a Stream the loop uses as before. On SQLite a
// store call is a local page read, so the listener stays on the loop (no hand-off per
// request).
//
// While the store is marked unavailable (set_unavailable), the front answers every request
// but /healthz itself with 503 and the reason, without bothering the loop: a provider
// retries a refused webhook later, and /readyz tells the load balancer to go elsewhere.
//
// Thread-safety: construct, listen, stop and destroy on the loop's thread; connections(),
// answering() and set_unavailable() from any thread. The handler runs on the loop's thread,
// its Respond may be called (once) from the loop's thread.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>

#include "daemon/http_server.h"

namespace boost::asio {
class io_context;
}

namespace dispatchd::daemon {

enum class FrontThread { loop, own };

class HttpFront {
 public:
  // `loop`: where the handler runs (and the server too, with FrontThread::loop).
  HttpFront(boost::asio::io_context& loop, HttpLimits limits, Handler handler, FrontThread thread);
  ~HttpFront();  // stops the listener (and joins its thread): open connections are closed
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  [[nodiscard]] std::expected<void, std::string> listen(const std::string& host, std::uint16_t port);
  std::uint16_t port() const;
  void stop();  // stops accepting; the requests being answered still get their answers
  std::size_t connections() const;
  std::size_t answering() const;

  // nullopt: requests go to the handler; a reason: 503 "database unavailable: <reason>"
  // (with Retry-After) for everything but /healthz.
  void set_unavailable(std::optional<std::string> reason);

  struct State;

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::daemon
