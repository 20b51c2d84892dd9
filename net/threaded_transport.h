#pragma once
// A Transport whose HTTP work (curl, sockets, timers) runs on a thread of its own, so that
// it does not take the caller's event loop: requests go to a CurlTransport driven by a
// private io_context, and each answer is posted back to the caller's io_context, where
// `done` runs. The same contract as Transport: `done` exactly once, on the caller's loop,
// never inside send().
//
// options.max_idle_connections is shared among several curl handles, one per 128
// connections, each request going to the next in turn (why: threaded_transport.cpp).
//
// A streamed body (HttpRequest::on_body) comes home chunk by chunk, before `done`, at most
// 1 MiB of it waiting at home at a time (the curl thread waits for the receiver beyond that).
// When the receiver stops it, the curl thread learns it at the stream's next chunk: a stream
// that then stays silent holds its connection until it ends or times out.
//
// Thread-safety: send() from any thread. Destroy it when the caller's loop no longer
// sends; requests still in flight are then abandoned without their callbacks.

#include <memory>

#include "net/curl_transport.h"
#include "net/http.h"

namespace boost::asio {
class io_context;
}

namespace dispatchd::net {

class ThreadedTransport final : public Transport {
 public:
  // `home` is where the callbacks run. Throws std::runtime_error when libcurl cannot be
  // initialised (a start-up failure).
  explicit ThreadedTransport(boost::asio::io_context& home, CurlTransportOptions options = {});
  ~ThreadedTransport() override;
  ThreadedTransport(const ThreadedTransport&) = delete;
  ThreadedTransport& operator=(const ThreadedTransport&) = delete;

  void send(HttpRequest request, HttpCallback done) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace dispatchd::net
