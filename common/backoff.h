#pragma once
// Backoff as a pure function of the failure count: every wait in dispatchd that grows with
// failures in a row comes from exponential_backoff(), and each caller adds only its own
// rules on top of it:
//
//   llm::backoff_delay       full jitter under it, or the server's Retry-After (llm/retry.h)
//   store::Redo              the pause after lost rounds: the agent's 1 s doubling to 30 s,
//                            a fixed 1 s with first == max (store/unit_of_work.h)
//   whatsapp::retry_delay    Graph's 2 s doubling to 5 min, at least a code's own pace and
//                            the Retry-After (connectors/whatsapp/errors.h)
//
// No clock, no randomness, no state: the caller counts the failures and keeps `now`.

#include <chrono>

namespace dispatchd {

struct Backoff {
  std::chrono::milliseconds first{1000};  // the wait after the first failure
  std::chrono::milliseconds max{30'000};  // no wait is longer
};

// The wait after the `failures`-th failure in a row: `first`, doubled for each further
// failure, at most `max`. Zero for failures < 1 (nothing failed) and for first <= 0. Never
// overflows, whatever `failures` is.
std::chrono::milliseconds exponential_backoff(const Backoff& backoff, int failures);

}  // namespace dispatchd
