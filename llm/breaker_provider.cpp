// The breaker's I/O: waiting calls, the probe's timer, the hold limit. The decisions are
// Breaker's (pure); this file only carries them out.
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "llm/breaker_provider.h"

#include <boost/asio/io_context.hpp>
#include <deque>
#include <random>

#include "llm/internal/timer_wait.h"

namespace dispatchd::llm {
namespace {

using std::chrono::milliseconds;

BreakerDeps breaker_defaults(BreakerDeps deps, boost::asio::io_context& io) {
  if (!deps.random) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    deps.random = [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
  }
  if (!deps.now) deps.now = [] { return std::chrono::steady_clock::now(); };
  if (!deps.wait) {
    deps.wait = internal::timer_wait(io);
  }
  return deps;
}

// What an answer says of the provider: only no answer, 429 and 5xx say it is failing.
CallResult result_of(const CompletionResult& result) {
  if (result) return CallResult::success;
  return is_retryable(result.error().error_class) ? CallResult::failure : CallResult::success;
}

}  // namespace

struct BreakerProvider::Shared : std::enable_shared_from_this<Shared> {
  struct Waiting {
    std::uint64_t id = 0;
    CompletionRequest request;
    CompletionCallback done;
  };

  std::unique_ptr<Provider> inner;
  Breaker breaker;
  milliseconds hold_limit;
  BreakerDeps deps;
  std::deque<Waiting> waiting;
  std::uint64_t next_id = 0;
  BreakerStats counts;
  std::chrono::steady_clock::time_point opened_at{};

  Shared(std::unique_ptr<Provider> inner_, BreakerSettings settings, milliseconds hold, BreakerDeps deps_)
      : inner(std::move(inner_)), breaker(settings), hold_limit(hold), deps(std::move(deps_)) {}

  BreakerStats stats() const {
    BreakerStats out = counts;
    out.state = breaker.state();
    out.waiting = waiting.size();
    if (breaker.state() == BreakerState::open)
      out.open_time += std::chrono::duration_cast<milliseconds>(deps.now() - opened_at);
    return out;
  }

  void send(CompletionRequest request, CompletionCallback done, bool probe) {
    if (probe) ++counts.probes;
    inner->complete(std::move(request),
                    [self = shared_from_this(), probe, done = std::move(done)](CompletionResult result) mutable {
                      self->answered(result, probe);
                      done(std::move(result));
                    });
  }

  void answered(const CompletionResult& result, bool probe) {
    const auto now = deps.now();
    std::optional<milliseconds> retry_after;
    if (!result) retry_after = result.error().retry_after;
    const auto outcome = result_of(result);
    if (probe && outcome == CallResult::failure) ++counts.failed_probes;
    const auto change = breaker.record(outcome, probe, now, deps.random(), retry_after);
    if (change == BreakerChange::opened) {
      ++counts.opened;
      opened_at = now;
    } else if (change == BreakerChange::closed) {
      counts.open_time += std::chrono::duration_cast<milliseconds>(now - opened_at);
    }
    if (change != BreakerChange::none && deps.on_change) deps.on_change(change, stats());
    if (change == BreakerChange::closed) return release_all();
    if (breaker.state() == BreakerState::open && !breaker.probing()) arm_probe(now);
  }

  // Wakes up at the probe time to send the oldest waiting call as the probe.
  void arm_probe(std::chrono::steady_clock::time_point now) {
    const auto delay = std::chrono::ceil<milliseconds>(breaker.next_probe() - now);
    deps.wait(std::max(delay, milliseconds(0)), [weak = weak_from_this()] {
      if (auto self = weak.lock()) self->probe_due();
    });
  }

  void probe_due() {
    if (waiting.empty()) return;  // the next call to arrive is the probe
    if (breaker.admit(deps.now()) != Admission::probe) return;
    auto first = std::move(waiting.front());
    waiting.pop_front();
    send(std::move(first.request), std::move(first.done), true);
  }

  void release_all() {
    for (auto& w : std::exchange(waiting, {})) send(std::move(w.request), std::move(w.done), false);
  }

  void hold(CompletionRequest request, CompletionCallback done) {
    const auto id = ++next_id;
    waiting.push_back({id, std::move(request), std::move(done)});
    // Held strongly: a waiting call is answered even when the provider is gone meanwhile.
    deps.wait(hold_limit, [self = shared_from_this(), id] { self->give_up(id); });
  }

  // A call that waited hold_limit ends without being sent; the message waits in the store.
  void give_up(std::uint64_t id) {
    const auto it = std::ranges::find(waiting, id, &Waiting::id);
    if (it == waiting.end()) return;  // sent meanwhile
    auto done = std::move(it->done);
    waiting.erase(it);
    ++counts.held_out;
    done(std::unexpected(not_sent()));
  }

  ProviderError not_sent() const {
    ProviderError error;
    error.error_class = ErrorClass::circuit_open;
    error.message = inner->name() + " is failing (its breaker is open): the call was not sent";
    error.info.provider = inner->name();
    error.info.model = inner->model();
    return error;
  }
};

BreakerProvider::BreakerProvider(std::unique_ptr<Provider> inner, BreakerSettings settings, milliseconds hold_limit,
                                 boost::asio::io_context& io, BreakerDeps deps)
    : m_shared(
          std::make_shared<Shared>(std::move(inner), settings, hold_limit, breaker_defaults(std::move(deps), io))) {}

BreakerProvider::~BreakerProvider() = default;

void BreakerProvider::complete(CompletionRequest request, CompletionCallback done) {
  auto& s = *m_shared;
  switch (s.breaker.admit(s.deps.now())) {
    case Admission::send: return s.send(std::move(request), std::move(done), false);
    case Admission::probe: return s.send(std::move(request), std::move(done), true);
    case Admission::hold:
      if (m_elsewhere && m_elsewhere()) {
        ++s.counts.handed_back;
        return done(std::unexpected(s.not_sent()));
      }
      return s.hold(std::move(request), std::move(done));
  }
}

const std::string& BreakerProvider::name() const { return m_shared->inner->name(); }
const std::string& BreakerProvider::model() const { return m_shared->inner->model(); }
BreakerStats BreakerProvider::stats() const { return m_shared->stats(); }

bool BreakerProvider::admits() const {
  const auto& b = m_shared->breaker;
  return b.state() == BreakerState::closed || b.probe_due(m_shared->deps.now());
}

}  // namespace dispatchd::llm
