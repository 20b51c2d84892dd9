#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "net/threaded_transport.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <thread>

#include "net/curl_transport.h"

namespace dispatchd::net {

namespace asio = boost::asio;

struct ThreadedTransport::Impl {
  Impl(asio::io_context& home_, CurlTransportOptions options) : home(home_), curl(io, std::move(options)) {}

  asio::io_context& home;
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  CurlTransport curl;  // driven by `io`, on `thread`
  std::thread thread;
};

ThreadedTransport::ThreadedTransport(asio::io_context& home, CurlTransportOptions options)
    : m_impl(std::make_unique<Impl>(home, std::move(options))) {
  m_impl->thread = std::thread([impl = m_impl.get()] { impl->io.run(); });
}

ThreadedTransport::~ThreadedTransport() {
  m_impl->work.reset();
  m_impl->io.stop();
  m_impl->thread.join();
}

void ThreadedTransport::send(HttpRequest request, HttpCallback done) {
  // CurlTransport::send may be called from any thread; its callback runs on our thread,
  // and the answer goes back home.
  m_impl->curl.send(std::move(request), [home = &m_impl->home, done = std::move(done)](HttpResult result) mutable {
    asio::post(*home, [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
  });
}

}  // namespace dispatchd::net
