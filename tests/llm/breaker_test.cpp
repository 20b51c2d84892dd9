// The breaker's decisions (llm/breaker.h) as tables, with an injected clock and jitter.
#include <catch2/catch.hpp>

#include "llm/breaker.h"

namespace llm = dispatchd::llm;
using namespace std::chrono_literals;

namespace {

using Time = llm::Breaker::Time;
const Time k_start = Time{} + 1000s;

llm::BreakerChange fail(llm::Breaker& b, Time now, bool probe = false,
                        std::optional<std::chrono::milliseconds> retry_after = std::nullopt) {
  return b.record(llm::CallResult::failure, probe, now, 0.0, retry_after);
}

}  // namespace

TEST_CASE("breaker: the delay before each probe", "[breaker]") {
  const llm::BreakerSettings s{.failure_threshold = 5, .probe_min = 1000ms, .probe_max = 5000ms};
  struct Row {
    int failed_probes;
    double random01;
    std::optional<std::chrono::milliseconds> retry_after;
    std::chrono::milliseconds want;
  };
  const Row rows[] = {
      {0, 0.0, std::nullopt, 1000ms},                                      // the first probe: probe_min
      {0, 0.999, std::nullopt, 1249ms},                                    // plus at most a quarter
      {1, 0.0, std::nullopt, 2000ms},                                      // doubling per failed probe
      {2, 0.0, std::nullopt, 4000ms},   {2, 0.999, std::nullopt, 4999ms},  // jitter stops at probe_max
      {3, 0.0, std::nullopt, 5000ms},                                      // then probe_max
      {30, 0.5, std::nullopt, 5000ms},                                     // however many failed
      {0, 0.0, 20000ms, 20000ms},                                          // never before Retry-After
      {3, 0.0, 200ms, 5000ms},                                             // a shorter Retry-After changes nothing
  };
  for (const auto& row : rows) {
    INFO("failed probes " << row.failed_probes << ", random " << row.random01);
    CHECK(llm::probe_delay(s, row.failed_probes, row.random01, row.retry_after) == row.want);
  }
}

TEST_CASE("breaker: it opens after the threshold of failures in a row, not before", "[breaker]") {
  llm::Breaker b({.failure_threshold = 3, .probe_min = 1000ms, .probe_max = 5000ms});
  CHECK(b.admit(k_start) == llm::Admission::send);
  CHECK(fail(b, k_start) == llm::BreakerChange::none);
  CHECK(fail(b, k_start) == llm::BreakerChange::none);
  // A success in between starts the count again.
  CHECK(b.record(llm::CallResult::success, false, k_start, 0.0, std::nullopt) == llm::BreakerChange::none);
  CHECK(fail(b, k_start) == llm::BreakerChange::none);
  CHECK(fail(b, k_start) == llm::BreakerChange::none);
  CHECK(b.state() == llm::BreakerState::closed);
  CHECK(fail(b, k_start + 1s) == llm::BreakerChange::opened);
  CHECK(b.state() == llm::BreakerState::open);
  CHECK(b.next_probe() == k_start + 2s);
  CHECK(b.admit(k_start + 1s) == llm::Admission::hold);
}

TEST_CASE("breaker: while open, one probe at a time at the probe pace", "[breaker]") {
  llm::Breaker b({.failure_threshold = 1, .probe_min = 1000ms, .probe_max = 4000ms});
  REQUIRE(fail(b, k_start) == llm::BreakerChange::opened);
  struct Row {
    const char* what;
    std::chrono::milliseconds at;  // after k_start
    llm::Admission want;
  };
  const Row before_first[] = {
      {"just opened", 0ms, llm::Admission::hold},
      {"before the probe time", 999ms, llm::Admission::hold},
      {"at the probe time: the probe", 1000ms, llm::Admission::probe},
      {"while the probe is out", 1001ms, llm::Admission::hold},
      {"long after, the probe still out", 60000ms, llm::Admission::hold},
  };
  for (const auto& row : before_first) {
    INFO(row.what);
    CHECK(b.admit(k_start + row.at) == row.want);
  }
  // The probe fails: the next one after twice the delay; late failures of calls sent before
  // it opened change nothing.
  CHECK(fail(b, k_start + 1500ms, true) == llm::BreakerChange::none);
  CHECK(b.failed_probes() == 1);
  CHECK(b.next_probe() == k_start + 3500ms);
  CHECK(fail(b, k_start + 3000ms) == llm::BreakerChange::none);
  CHECK(b.next_probe() == k_start + 3500ms);
  CHECK(b.admit(k_start + 3499ms) == llm::Admission::hold);
  CHECK(b.admit(k_start + 3500ms) == llm::Admission::probe);
  // A 503 with Retry-After: 30 s: no probe before it.
  CHECK(fail(b, k_start + 4000ms, true, 30000ms) == llm::BreakerChange::none);
  CHECK(b.next_probe() == k_start + 34000ms);
  CHECK(b.admit(k_start + 33999ms) == llm::Admission::hold);
  CHECK(b.admit(k_start + 34000ms) == llm::Admission::probe);
}

TEST_CASE("breaker: the probe's success closes it, and so does any late success", "[breaker]") {
  SECTION("the probe") {
    llm::Breaker b({.failure_threshold = 1, .probe_min = 1000ms, .probe_max = 4000ms});
    REQUIRE(fail(b, k_start) == llm::BreakerChange::opened);
    REQUIRE(b.admit(k_start + 1s) == llm::Admission::probe);
    CHECK(b.record(llm::CallResult::success, true, k_start + 2s, 0.0, std::nullopt) == llm::BreakerChange::closed);
    CHECK(b.state() == llm::BreakerState::closed);
    CHECK(b.admit(k_start + 2s) == llm::Admission::send);
    CHECK_FALSE(b.probing());
    // Opened again later, the pace starts from probe_min again.
    REQUIRE(fail(b, k_start + 10s) == llm::BreakerChange::opened);
    CHECK(b.next_probe() == k_start + 11s);
  }
  SECTION("a call sent before it opened, answered late") {
    llm::Breaker b({.failure_threshold = 2, .probe_min = 1000ms, .probe_max = 4000ms});
    REQUIRE(fail(b, k_start) == llm::BreakerChange::none);
    REQUIRE(fail(b, k_start) == llm::BreakerChange::opened);
    REQUIRE(b.admit(k_start + 1s) == llm::Admission::probe);
    CHECK(b.record(llm::CallResult::success, false, k_start + 1500ms, 0.0, std::nullopt) == llm::BreakerChange::closed);
    CHECK_FALSE(b.probing());  // the probe's answer, when it comes, finds it closed: one failure of two
    CHECK(b.record(llm::CallResult::failure, true, k_start + 1600ms, 0.0, std::nullopt) == llm::BreakerChange::none);
    CHECK(b.state() == llm::BreakerState::closed);
  }
}
