#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "net/threaded_transport.h"

#include "common/thread_name.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "net/curl_transport.h"

namespace dispatchd::net {

namespace asio = boost::asio;

namespace {

// libcurl (7.88) looks for a reusable connection by walking every connection it holds to
// the request's host, each time a transfer starts. With thousands of HTTP/1.1 calls in
// flight to one model endpoint that walk became the costliest step of a call, so the
// connections are split among several curl multi handles, each with a short list; a
// request goes to the next one in turn. All of them run on the one thread.
constexpr long k_connections_per_shard = 128;

std::vector<std::unique_ptr<CurlTransport>> make_shards(asio::io_context& io, const CurlTransportOptions& options) {
  const long wanted = std::max(1L, options.max_idle_connections);
  const long shards = (wanted + k_connections_per_shard - 1) / k_connections_per_shard;
  std::vector<std::unique_ptr<CurlTransport>> out;
  for (long i = 0; i < shards; ++i) {
    CurlTransportOptions mine = options;
    mine.max_idle_connections = (wanted + shards - 1) / shards;
    out.push_back(std::make_unique<CurlTransport>(io, std::move(mine)));
  }
  return out;
}

}  // namespace

struct ThreadedTransport::Impl {
  Impl(asio::io_context& home_, const CurlTransportOptions& options) : home(home_), shards(make_shards(io, options)) {}

  CurlTransport& next() { return *shards[turn.fetch_add(1, std::memory_order_relaxed) % shards.size()]; }

  asio::io_context& home;
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  std::vector<std::unique_ptr<CurlTransport>> shards;  // driven by `io`, on `thread`
  std::atomic<std::size_t> turn{0};
  std::thread thread;
};

ThreadedTransport::ThreadedTransport(asio::io_context& home, CurlTransportOptions options)
    : m_impl(std::make_unique<Impl>(home, options)) {
  m_impl->thread = std::thread([impl = m_impl.get()] {
    common::name_this_thread("http-client");
    impl->io.run();
  });
}

ThreadedTransport::~ThreadedTransport() {
  m_impl->work.reset();
  m_impl->io.stop();
  m_impl->thread.join();
}

namespace {

// A streamed body goes home chunk by chunk, each posted before the answer (one io_context
// runs what is posted in order). The receiver's "stop" reaches the curl thread through the
// flag: the transfer ends at its next chunk, and no chunk reaches the receiver after it. A
// stream stopped here that stays silent ends at its timeout instead: the answer is then the
// head the receiver saw, as the contract has it (stopping is not an error).
struct HomeStream {
  BodyChunk receiver;
  std::atomic<bool> stopped{false};
  HttpResponse head;  // written on the curl thread before its chunk is posted, read at home after
};

}  // namespace

void ThreadedTransport::send(HttpRequest request, HttpCallback done) {
  asio::io_context& home = m_impl->home;
  std::shared_ptr<HomeStream> stream;
  if (request.on_body) {
    stream = std::make_shared<HomeStream>();
    stream->receiver = std::move(request.on_body);
    request.on_body = [&home, stream](const HttpResponse& head, std::string_view chunk) {
      if (stream->stopped.load()) return false;
      stream->head = head;
      asio::post(home, [stream, head, chunk = std::string(chunk)] {
        if (!stream->stopped.load() && !stream->receiver(head, chunk)) stream->stopped.store(true);
      });
      return true;
    };
  }
  // CurlTransport::send may be called from any thread; its callback runs on our thread,
  // and the answer goes back home.
  m_impl->next().send(std::move(request), [&home, stream, done = std::move(done)](HttpResult result) mutable {
    asio::post(home, [stream, done = std::move(done), result = std::move(result)]() mutable {
      if (!result && stream && stream->stopped.load()) result = stream->head;
      done(std::move(result));
    });
  });
}

}  // namespace dispatchd::net
