// Retry-After read once for every caller (net/retry_after.h): delay-seconds, the three
// HTTP-date forms against an injected now, OpenAI's retry-after-ms, and what is refused.
#include <catch2/catch.hpp>

#include "net/retry_after.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

// 2015-10-21 07:28:00 UTC.
const std::chrono::system_clock::time_point k_now =
    std::chrono::sys_days(std::chrono::year(2015) / 10 / 21) + 7h + 28min;

}  // namespace

TEST_CASE("Retry-After: delay-seconds and HTTP-dates, anything else refused", "[retry_after]") {
  struct Row {
    const char* value;
    std::optional<milliseconds> expected;
  };
  const Row rows[] = {
      {"2", 2000ms},
      {" 0 ", 0ms},
      {"120", 120'000ms},
      {"999999999", milliseconds(999'999'999'000)},
      {"1000000000", std::nullopt},  // ten digits: more than 31 years
      {"Wed, 21 Oct 2015 07:28:30 GMT", 30'000ms},
      {"Wed, 21 Oct 2015 08:28:00 GMT", 3'600'000ms},
      {"Thu, 22 Oct 2015 07:28:00 GMT", 86'400'000ms},
      {"Wed, 21 Oct 2015 07:27:00 GMT", 0ms},  // already past
      {"Wednesday, 21-Oct-15 07:28:05 GMT", 5000ms},
      {"Wed Oct 21 07:28:10 2015", 10'000ms},
      {"Wed Oct  1 07:28:10 2015", 0ms},  // asctime's padded day, in the past
      {"Wed, 21 Oct 2015 07:28:30 UTC", std::nullopt},
      {"Wed, 31 Feb 2015 07:28:30 GMT", std::nullopt},
      {"Wed, 21 Foo 2015 07:28:30 GMT", std::nullopt},
      {"Wed, 21 Oct 2015 25:28:30 GMT", std::nullopt},
      {"Wed, 21 Oct 2015 07:28 GMT", std::nullopt},
      {"", std::nullopt},
      {"-1", std::nullopt},
      {"1.5", std::nullopt},
      {"1e3", std::nullopt},
      {"soon", std::nullopt},
  };
  for (const Row& row : rows) {
    INFO(row.value);
    CHECK(net::parse_retry_after(row.value, k_now) == row.expected);
  }
}

TEST_CASE("Retry-After from a response's headers: retry-after-ms first, then Retry-After", "[retry_after]") {
  struct Row {
    net::Headers headers;
    std::optional<milliseconds> expected;
  };
  const Row rows[] = {
      {{{"Retry-After", "2"}}, 2000ms},
      {{{"retry-after", "Wed, 21 Oct 2015 07:28:02 GMT"}}, 2000ms},
      {{{"retry-after-ms", "1500.7"}, {"Retry-After", "2"}}, 1500ms},
      {{{"retry-after-ms", "garbage"}, {"Retry-After", "2"}}, 2000ms},
      {{{"X-Other", "1"}}, std::nullopt},
  };
  for (const Row& row : rows) CHECK(net::retry_after_of(row.headers, k_now) == row.expected);
  CHECK(net::retry_after_seconds({{"retry-after-ms", "1500"}}, k_now) == 2s);  // rounded up
  CHECK(net::retry_after_seconds({{"Retry-After", "7"}}, k_now) == 7s);
  CHECK_FALSE(net::retry_after_seconds({}, k_now).has_value());
}
