#pragma once
// A circuit breaker for one model provider, as a pure state machine: no clock, no timer, no
// I/O (the time and the jitter are passed in; BreakerProvider, breaker_provider.h, carries the
// decisions out). It is driven by what says whether the provider is up: transport failures,
// 429 and 5xx count as failures; any answer (a 2xx, also one the validator refuses, or another
// 4xx) is a success. Verdicts on the model's output play no part.
//
//   closed   every call is sent; `failure_threshold` failures in a row open it
//   open     no call is sent; once the probe time has come, admit() lets one call through as
//            the probe (and no other until it is answered). The probe's success closes the
//            breaker; its failure schedules the next probe: probe_min doubling per failed
//            probe up to probe_max, plus up to a quarter of that as jitter (never past
//            probe_max), and never before the server's Retry-After.
//
// A success from any call (one sent before the breaker opened, answered late) closes it too:
// the provider answers. A failure of a call other than the probe while open changes nothing.

#include <chrono>
#include <optional>

namespace dispatchd::llm {

struct BreakerSettings {
  int failure_threshold = 5;                  // failures in a row that open it; >= 1
  std::chrono::milliseconds probe_min{1000};  // the first probe's delay after opening
  std::chrono::milliseconds probe_max{5000};  // the longest delay between probes; >= probe_min
};

enum class BreakerState { closed, open };

// What admit() says of a call.
enum class Admission {
  send,   // closed: send it
  probe,  // open, and the probe time has come: send it as the probe
  hold,   // open: do not send it (wait for the breaker to close, or give up)
};

// What a sent call's answer says of the provider.
enum class CallResult { success, failure };

// A change worth a log line and a metric.
enum class BreakerChange { none, opened, closed };

class Breaker {
 public:
  using Time = std::chrono::steady_clock::time_point;

  explicit Breaker(BreakerSettings settings) : m_settings(settings) {}

  // Whether a call may go at `now`. A `probe` admission makes that call the probe: no other is
  // admitted until record() hears its answer.
  Admission admit(Time now);

  // The answer of a call admit() let through (`probe` says it was the probe). `random01` (in
  // [0, 1)) draws the jitter of the next probe; `retry_after` is the server's Retry-After.
  BreakerChange record(CallResult result, bool probe, Time now, double random01,
                       std::optional<std::chrono::milliseconds> retry_after);

  BreakerState state() const { return m_state; }
  // When the next probe may go (open only).
  Time next_probe() const { return m_next_probe; }
  // Whether the probe is out, unanswered.
  bool probing() const { return m_probing; }
  // Whether admit(now) would let a probe go: open, no probe out, its time come.
  bool probe_due(Time now) const { return m_state == BreakerState::open && !m_probing && now >= m_next_probe; }
  // Failed probes since it opened.
  int failed_probes() const { return m_failed_probes; }

 private:
  void schedule(Time now, double random01, std::optional<std::chrono::milliseconds> retry_after);

  BreakerSettings m_settings;
  BreakerState m_state = BreakerState::closed;
  int m_failures = 0;  // in a row, while closed
  int m_failed_probes = 0;
  bool m_probing = false;
  Time m_next_probe{};
};

// The delay before the next probe after `failed_probes` failed ones (0: the first probe after
// opening), as Breaker schedules it. Pure: a table tests it.
std::chrono::milliseconds probe_delay(const BreakerSettings& settings, int failed_probes, double random01,
                                      std::optional<std::chrono::milliseconds> retry_after);

}  // namespace dispatchd::llm
