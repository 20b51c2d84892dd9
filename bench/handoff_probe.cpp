// handoff_probe: the floor under the way out (model answer -> Graph request) on this
// machine, with none of dispatchd's work: only the hand-offs between threads that the path
// takes and the one sync it waits for. A model answer reaches the HTTP client's thread, goes
// to the event loop (the decision, its `sending` mark, the COMMIT), to the syncer thread
// (fdatasync) and back, then to the HTTP client's thread (the send) and out to the Graph API.
// The probe's "peer" thread plays both fakes: it starts a chain at a steady pace and stamps
// its end, so every hop in between finds its thread asleep, as at a paced daemon's.
//
//   handoff_probe [CHAINS] [PER_SECOND] [DIR]   (defaults: 3000 500 /var/tmp)
//
// Three runs, each CHAINS chains at PER_SECOND: one hop (peer -> an idle Asio thread ->
// peer), the way out's six hops with no sync, and the six hops with the syncer writing 20
// pages to a file in DIR and fdatasyncing it (as a round's COMMIT and sync do). Each run
// prints the chain times' percentiles in microseconds. A benchmark: it never fails on timing.
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/probe_file.h"

namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

using dispatchd::bench::percentile;
using dispatchd::bench::ProbeFile;

constexpr std::size_t k_pages_per_sync = 20;

// A thread running an io_context until destroyed, as the loop and the HTTP client's thread.
class Worker {
 public:
  Worker() : m_thread([this] { m_io.run(); }) {}
  ~Worker() {
    m_work.reset();
    m_thread.join();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  template <typename F>
  void post(F&& f) {
    asio::post(m_io, std::forward<F>(f));
  }

 private:
  asio::io_context m_io{1};
  asio::executor_work_guard<asio::io_context::executor_type> m_work = asio::make_work_guard(m_io);
  std::thread m_thread;
};

// The syncer: a thread asleep on a condition variable until handed a job, as store::Round's.
class Syncer {
 public:
  Syncer() : m_thread([this] { run(); }) {}
  ~Syncer() {
    {
      const std::lock_guard lock(m_mutex);
      m_stopping = true;
    }
    m_wake.notify_one();
    m_thread.join();
  }
  Syncer(const Syncer&) = delete;
  Syncer& operator=(const Syncer&) = delete;
  void hand(std::function<void()> job) {
    {
      const std::lock_guard lock(m_mutex);
      m_jobs.push_back(std::move(job));
    }
    m_wake.notify_one();
  }

 private:
  void run() {
    std::unique_lock lock(m_mutex);
    while (true) {
      m_wake.wait(lock, [&] { return m_stopping || !m_jobs.empty(); });
      if (m_jobs.empty()) return;
      std::vector<std::function<void()>> jobs;
      jobs.swap(m_jobs);
      lock.unlock();
      for (auto& job : jobs) job();
      lock.lock();
    }
  }
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::vector<std::function<void()>> m_jobs;
  bool m_stopping = false;
  std::thread m_thread;
};

enum class Chain { one_hop, six_hops, six_hops_with_sync };

// The peer's side: waits for the chain it started to come back (a hop into the peer's thread).
class Peer {
 public:
  void done() {
    {
      const std::lock_guard lock(m_mutex);
      m_done = true;
    }
    m_wake.notify_one();
  }
  void wait() {
    std::unique_lock lock(m_mutex);
    m_wake.wait(lock, [&] { return m_done; });
    m_done = false;
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_done = false;
};

// Runs `chains` chains of one kind at `per_second`; returns their times in microseconds, or
// nothing when the disk failed.
std::vector<double> run(Chain kind, int chains, int per_second, ProbeFile& wal) {
  Worker http;
  Worker loop;
  Syncer syncer;
  Peer peer;
  bool disk_ok = true;
  std::vector<double> took;
  took.reserve(static_cast<std::size_t>(chains));
  const auto gap = std::chrono::nanoseconds(1'000'000'000 / per_second);
  auto next = Clock::now();
  for (int i = 0; i < chains; ++i) {
    next += gap;
    std::this_thread::sleep_until(next);
    const auto start = Clock::now();
    if (kind == Chain::one_hop) {
      http.post([&] { peer.done(); });
    } else {
      // peer -> http -> loop -> syncer -> loop -> http -> peer
      http.post([&] {
        loop.post([&] {
          const bool with_sync = kind == Chain::six_hops_with_sync;
          if (with_sync && !wal.write()) disk_ok = false;
          syncer.hand([&, with_sync] {
            if (with_sync && !wal.sync()) disk_ok = false;
            loop.post([&] { http.post([&] { peer.done(); }); });
          });
        });
      });
    }
    peer.wait();
    took.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  if (!disk_ok) return {};
  return took;
}

}  // namespace

int main(int argc, char** argv) {
  const int chains = argc > 1 ? std::atoi(argv[1]) : 3000;
  const int per_second = argc > 2 ? std::atoi(argv[2]) : 500;
  const std::string dir = argc > 3 ? argv[3] : "/var/tmp";
  if (chains < 1 || per_second < 1 || per_second > 100'000) {
    std::fprintf(stderr, "usage: handoff_probe [CHAINS >= 1] [PER_SECOND 1..100000] [DIR]\n");
    return 2;
  }
  ProbeFile wal(dir, "handoff_probe.tmp", k_pages_per_sync);
  if (!wal.ok()) {
    std::fprintf(stderr, "handoff_probe: cannot prepare a file in %s: %s\n", dir.c_str(), std::strerror(errno));
    return 1;
  }
  const struct {
    Chain kind;
    const char* name;
  } runs[] = {{Chain::one_hop, "one hop (peer -> thread -> peer)"},
              {Chain::six_hops, "the way out's six hops, no sync"},
              {Chain::six_hops_with_sync, "the six hops with 20 pages written and fdatasync"}};
  for (const auto& r : runs) {
    std::vector<double> took = run(r.kind, chains, per_second, wal);
    if (took.empty()) {
      std::fprintf(stderr, "handoff_probe: the disk failed in %s: %s\n", dir.c_str(), std::strerror(errno));
      return 1;
    }
    std::sort(took.begin(), took.end());
    std::printf("%s, %d at %d/s: p50 %.0f us, p90 %.0f us, p99 %.0f us, max %.0f us\n", r.name, chains, per_second,
                percentile(took, 0.5), percentile(took, 0.9), percentile(took, 0.99), took.back());
  }
  return 0;
}
