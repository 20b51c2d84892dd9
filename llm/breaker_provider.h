#pragma once
// A Provider guarded by a circuit breaker (llm/breaker.h), the breaker's decisions carried
// out: while it is closed calls go through; while it is open they wait here, and no request
// leaves, until it closes (they all go at once) or `hold_limit` has passed (they end with
// ErrorClass::circuit_open: the message waits in the store, postponed, like after a transport
// failure). When the probe time comes, the oldest waiting call goes as the probe (or the next
// one to arrive, when none waits). Attempts toward a failing provider are so bounded by the
// probe pace, whatever the backlog.
//
// Wrap the HTTP provider with it, inside the LimitedProvider (a waiting call keeps its slot:
// at most llm.max_concurrency wait) and the RetryingProvider (each HTTP attempt is counted,
// and circuit_open is not retried):
//   RetryingProvider(LimitedProvider(BreakerProvider(make_provider(...))))
//
// Thread-safety: the event loop's thread only; `done` and on_change run on it.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "llm/breaker.h"
#include "llm/provider.h"

namespace boost::asio {
class io_context;
}

namespace dispatchd::llm {

struct BreakerStats {
  BreakerState state = BreakerState::closed;
  std::int64_t opened = 0;                 // times it opened
  std::int64_t probes = 0;                 // probes sent
  std::int64_t failed_probes = 0;          // of them failed
  std::int64_t held_out = 0;               // calls that waited hold_limit and ended circuit_open
  std::int64_t handed_back = 0;            // calls ended circuit_open at once: elsewhere() admitted them
  std::size_t waiting = 0;                 // calls waiting now
  std::chrono::milliseconds open_time{0};  // time spent open, the current opening included
};

// Seams for tests; empty members get the real ones (as RetryDeps, llm/retry.h).
struct BreakerDeps {
  std::function<double()> random;                              // uniform in [0, 1)
  std::function<std::chrono::steady_clock::time_point()> now;  // steady_clock::now
  // Calls `then` once `delay` has passed; default: an Asio steady_timer on the io_context.
  std::function<void(std::chrono::milliseconds delay, std::move_only_function<void()> then)> wait;
  // Told of each change (opened, closed) with the stats after it, on the loop: the log line,
  // and on closing, the messages the outage postponed taken again at once.
  std::function<void(BreakerChange, const BreakerStats&)> on_change;
};

class BreakerProvider final : public Provider {
 public:
  // REQUIRES: `io` outlives the provider's pending calls when deps.wait is not given.
  BreakerProvider(std::unique_ptr<Provider> inner, BreakerSettings settings, std::chrono::milliseconds hold_limit,
                  boost::asio::io_context& io, BreakerDeps deps = {});
  ~BreakerProvider() override;

  void complete(CompletionRequest request, CompletionCallback done) override;
  const std::string& name() const override;
  const std::string& model() const override;

  BreakerStats stats() const;
  // Whether a call given now would go: the breaker is closed, or it is open and a probe is due
  // (a router sends it one, so that a provider it routes around is still probed).
  bool admits() const;
  // While `elsewhere` returns true, a call the open breaker would hold ends at once with
  // circuit_open instead, for the caller to send to another provider (llm/router.h).
  void set_elsewhere(std::function<bool()> elsewhere) { m_elsewhere = std::move(elsewhere); }

  struct Shared;

 private:
  std::shared_ptr<Shared> m_shared;
  std::function<bool()> m_elsewhere;
};

}  // namespace dispatchd::llm
