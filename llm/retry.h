#pragma once
// Transport-level retries for any Provider: transport failures, 429 and 5xx are sent
// again with exponential backoff and full jitter, honouring Retry-After, on a budget of
// their own (attempts and/or a deadline). This budget is separate from the contract
// re-asks of the agent loop: a retried call is still one attempt. The other classes (truncated, bad_response,
// client, blocked, refused, no_text) are returned at once.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "llm/provider.h"
#include "net/http.h"

namespace boost::asio {
class io_context;
}

namespace dispatchd::llm {

struct RetryPolicy {
  int max_attempts = 4;  // HTTP attempts per call, the first included; >= 1
  std::chrono::milliseconds base_delay{500};
  std::chrono::milliseconds max_delay{30'000};
  // A Retry-After longer than this ends the call at once with that error (retry_after set),
  // so the caller can park the message instead of holding the call open.
  std::chrono::milliseconds max_retry_after{60'000};
  // The whole call, waits included: a wait that would end past it is not started.
  std::optional<std::chrono::milliseconds> deadline{};
};

// How long to wait after the `failures`-th failed attempt (failures >= 1). Without a
// Retry-After: full jitter, `random01` (in [0, 1)) times min(max_delay, base_delay *
// 2^(failures-1)) (exponential_backoff, common/backoff.h). With one: exactly the server's
// delay (capping it is the caller's decision, see max_retry_after). Pure: a table tests it.
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int failures, double random01,
                                        std::optional<std::chrono::milliseconds> retry_after);

// Seams for tests; empty members get the real ones.
struct RetryDeps {
  std::function<double()> random;                              // uniform in [0, 1); default: a seeded mt19937_64
  std::function<std::chrono::steady_clock::time_point()> now;  // default: steady_clock::now
  // Calls `then` once `delay` has passed; default: an Asio steady_timer on the io_context.
  std::function<void(std::chrono::milliseconds delay, std::move_only_function<void()> then)> wait;
};

class RetryingProvider final : public Provider {
 public:
  // REQUIRES: `io` outlives the provider's pending calls when deps.wait is not given.
  RetryingProvider(std::unique_ptr<Provider> inner, RetryPolicy policy, boost::asio::io_context& io,
                   RetryDeps deps = {});

  // The result is the last attempt's, with info.http_attempts and info.elapsed covering
  // the whole call.
  void complete(CompletionRequest request, CompletionCallback done) override;
  const std::string& name() const override;
  const std::string& model() const override;

 private:
  struct Shared;
  struct Call;
  std::shared_ptr<Shared> m_shared;
};

}  // namespace dispatchd::llm
