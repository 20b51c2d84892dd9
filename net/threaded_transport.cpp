#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "net/threaded_transport.h"

#include "common/thread_name.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
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
  // Set by the destructor before the curl thread is stopped and joined: a stream waiting for
  // home to take its queued bytes stops waiting (home may be what is destroying us).
  std::shared_ptr<std::atomic<bool>> closing = std::make_shared<std::atomic<bool>>(false);
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
  m_impl->closing->store(true);
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
//
// Backpressure: a receiver slower than the network (a download written to the store as it
// comes) would otherwise have the whole body queued at home. At most k_max_queued bytes of a
// stream wait there; past that the curl thread waits for home to take them, in short slices
// so that a home loop that stopped, or a transport being destroyed, never holds it for good. Other transfers of that
// curl thread wait meanwhile: as long as home takes a chunk, normally well under a millisecond.
constexpr std::size_t k_max_queued = 1024 * 1024;
constexpr std::chrono::milliseconds k_wait_slice{10};

struct HomeStream {
  BodyChunk receiver;
  std::atomic<bool> stopped{false};
  HttpResponse head;  // written on the curl thread before its chunk is posted, read at home after
  std::mutex mutex;   // guards queued
  std::condition_variable taken;
  std::size_t queued = 0;  // bytes posted home and not yet handed to the receiver
};

}  // namespace

void ThreadedTransport::send(HttpRequest request, HttpCallback done) {
  asio::io_context& home = m_impl->home;
  std::shared_ptr<HomeStream> stream;
  if (request.on_body) {
    stream = std::make_shared<HomeStream>();
    stream->receiver = std::move(request.on_body);
    request.on_body = [&home, stream, closing = m_impl->closing](const HttpResponse& head, std::string_view chunk) {
      {
        std::unique_lock lock(stream->mutex);
        while (stream->queued >= k_max_queued && !stream->stopped.load() && !home.stopped() && !closing->load())
          stream->taken.wait_for(lock, k_wait_slice);
        stream->queued += chunk.size();
      }
      if (stream->stopped.load()) return false;
      stream->head = head;
      asio::post(home, [stream, head, chunk = std::string(chunk)] {
        if (!stream->stopped.load() && !stream->receiver(head, chunk)) stream->stopped.store(true);
        {
          const std::lock_guard lock(stream->mutex);
          stream->queued -= chunk.size();
        }
        stream->taken.notify_one();
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
