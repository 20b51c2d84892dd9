// One logical call = attempts until success, a permanent error, or the budget runs out.
// Waits run on timers (no thread sleeps); the state of a call lives in its callbacks.
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "llm/retry.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <charconv>
#include <mutex>
#include <random>

#include "common/backoff.h"
#include "llm/internal/timer_wait.h"

namespace dispatchd::llm {
namespace {

using std::chrono::milliseconds;

RetryDeps with_defaults(RetryDeps deps, boost::asio::io_context& io) {
  if (!deps.random) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    auto mutex = std::make_shared<std::mutex>();
    deps.random = [engine, mutex] {
      std::lock_guard lock(*mutex);
      return std::uniform_real_distribution<double>(0.0, 1.0)(*engine);
    };
  }
  if (!deps.now) deps.now = [] { return std::chrono::steady_clock::now(); };
  if (!deps.wait) {
    deps.wait = internal::timer_wait(io);
  }
  return deps;
}

}  // namespace

milliseconds backoff_delay(const RetryPolicy& policy, int failures, double random01,
                           std::optional<milliseconds> retry_after) {
  if (retry_after) return std::max(*retry_after, milliseconds(0));
  // The first attempt's failure waits under base_delay too (failures < 1 counts as 1).
  const milliseconds ceiling = exponential_backoff({policy.base_delay, policy.max_delay}, std::max(failures, 1));
  return milliseconds(static_cast<std::int64_t>(std::clamp(random01, 0.0, 1.0) * static_cast<double>(ceiling.count())));
}

struct RetryingProvider::Shared {
  std::unique_ptr<Provider> inner;
  RetryPolicy policy;
  RetryDeps deps;
};

// One logical call in progress.
struct RetryingProvider::Call : std::enable_shared_from_this<Call> {
  std::shared_ptr<Shared> shared;
  CompletionRequest request;
  CompletionCallback done;
  std::chrono::steady_clock::time_point start;
  int attempts = 0;

  void attempt() {
    ++attempts;
    shared->inner->complete(
        request, [self = shared_from_this()](CompletionResult result) { self->on_result(std::move(result)); });
  }

  void on_result(CompletionResult result) {
    CallInfo& info = result ? result->info : result.error().info;
    info.http_attempts = attempts;
    info.elapsed = std::chrono::duration_cast<milliseconds>(shared->deps.now() - start);
    if (result || !retry(result.error())) done(std::move(result));
  }

  // Schedules the next attempt when the error and the budget allow it.
  bool retry(const ProviderError& error) {
    const RetryPolicy& policy = shared->policy;
    if (!is_retryable(error.error_class) || attempts >= policy.max_attempts) return false;
    if (error.retry_after && *error.retry_after > policy.max_retry_after) return false;
    const milliseconds delay = backoff_delay(policy, attempts, shared->deps.random(), error.retry_after);
    if (policy.deadline && shared->deps.now() + delay > start + *policy.deadline) return false;
    shared->deps.wait(delay, [self = shared_from_this()] { self->attempt(); });
    return true;
  }
};

RetryingProvider::RetryingProvider(std::unique_ptr<Provider> inner, RetryPolicy policy, boost::asio::io_context& io,
                                   RetryDeps deps)
    : m_shared(std::make_shared<Shared>(Shared{std::move(inner), policy, with_defaults(std::move(deps), io)})) {}

void RetryingProvider::complete(CompletionRequest request, CompletionCallback done) {
  auto call = std::make_shared<Call>();
  call->shared = m_shared;
  call->request = std::move(request);
  call->done = std::move(done);
  call->start = m_shared->deps.now();
  call->attempt();
}

const std::string& RetryingProvider::name() const { return m_shared->inner->name(); }
const std::string& RetryingProvider::model() const { return m_shared->inner->model(); }

}  // namespace dispatchd::llm
