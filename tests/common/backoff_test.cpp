// The one backoff function, as a table: the waits each of its callers asks for.
#include <catch2/catch.hpp>

#include <climits>

#include "common/backoff.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

TEST_CASE("exponential_backoff: first, doubled per failure in a row, at most max") {
  const Backoff agent{1000ms, 30'000ms};   // the agent's pause after lost rounds
  const Backoff channel{1000ms, 1000ms};   // a fixed 1 s: first == max
  const Backoff llm{500ms, 4000ms};        // llm::RetryPolicy's ceiling (before jitter)
  const Backoff graph{2000ms, 300'000ms};  // Graph's retries: 2 s doubling to 5 min
  const Backoff huge{1ms, milliseconds::max()};
  struct Row {
    const char* what;
    Backoff backoff;
    int failures;
    milliseconds expected;
  };
  const Row rows[] = {
      {"nothing failed yet", agent, 0, 0ms},
      {"a negative count", agent, -3, 0ms},
      {"agent: the first lost round", agent, 1, 1000ms},
      {"agent: the second", agent, 2, 2000ms},
      {"agent: the third", agent, 3, 4000ms},
      {"agent: 16 s", agent, 5, 16'000ms},
      {"agent: capped at 30 s", agent, 6, 30'000ms},
      {"agent: stays capped", agent, 7, 30'000ms},
      {"agent: many failures", agent, INT_MAX, 30'000ms},
      {"channel: fixed", channel, 1, 1000ms},
      {"channel: still fixed", channel, 9, 1000ms},
      {"llm: first", llm, 1, 500ms},
      {"llm: fourth reaches max", llm, 4, 4000ms},
      {"llm: past max", llm, 60, 4000ms},
      {"graph: first", graph, 1, 2000ms},
      {"graph: 256 s", graph, 8, 256'000ms},
      {"graph: capped at 5 min", graph, 9, 300'000ms},
      {"first above max: max", Backoff{5000ms, 3000ms}, 1, 3000ms},
      {"no first: no wait", Backoff{0ms, 3000ms}, 4, 0ms},
      {"no overflow near the limit", huge, 100, milliseconds::max()},
      {"2^62 ms is still exact", huge, 63, milliseconds(std::int64_t{1} << 62)},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what, row.failures);
    CHECK(exponential_backoff(row.backoff, row.failures) == row.expected);
  }
}
