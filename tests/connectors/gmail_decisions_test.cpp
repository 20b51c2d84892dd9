#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "connectors/gmail/decisions.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using gmail::ApiError;
using gmail::ApiErrorKind;

namespace {

// The outcome's kind and, for RetryAfter, its delay.
std::string kind_of(const connectors::SendOutcome& outcome) {
  return std::visit(
      [](const auto& o) -> std::string {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, connectors::Sent>) return "sent";
        if constexpr (std::is_same_v<T, connectors::RetryAfter>) return "retry " + std::to_string(o.after.count());
        if constexpr (std::is_same_v<T, connectors::Failed>) return "failed";
        if constexpr (std::is_same_v<T, connectors::Unknown>) return "unknown";
      },
      outcome);
}

ApiError error(ApiErrorKind kind, int status, std::optional<std::chrono::seconds> retry_after = std::nullopt) {
  return ApiError{kind, status, "", "what Google said", retry_after};
}

}  // namespace

TEST_CASE("gmail decisions: a send's answer as the pump's outcome", "[gmail]") {
  struct Row {
    ApiError error;
    int failures;
    const char* outcome;
  };
  const std::vector<Row> table{
      {error(ApiErrorKind::unreachable, 0), 1, "retry 5000"},  // never reached Google: again, with backoff
      {error(ApiErrorKind::unreachable, 0), 3, "retry 20000"},
      {error(ApiErrorKind::unreachable, 0), 40, "retry 300000"},  // at most 5 minutes
      {error(ApiErrorKind::rate_limited, 429, 7s), 0, "retry 7000"},
      {error(ApiErrorKind::rate_limited, 403), 0, "retry 30000"},  // userRateLimitExceeded without Retry-After
      {error(ApiErrorKind::unauthorized, 401), 0, "retry 60000"},
      {error(ApiErrorKind::server, 503), 0, "unknown"},  // may have left: looked up, never resent blindly
      {error(ApiErrorKind::uncertain, 0), 0, "unknown"},
      {error(ApiErrorKind::not_found, 404), 0, "failed"},
      {error(ApiErrorKind::permanent, 400), 0, "failed"},
  };
  for (const auto& row : table) {
    CAPTURE(gmail::describe(row.error), row.failures);
    const auto outcome = gmail::send_outcome(row.error, row.failures);
    CHECK(kind_of(outcome) == row.outcome);
    std::visit(
        [](const auto& o) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(o)>, connectors::Sent>)
            CHECK_THAT(o.why, Catch::StartsWith("users.messages.send: "));
        },
        outcome);
  }
}

TEST_CASE("gmail decisions: a send without an access token", "[gmail]") {
  using gmail::OAuthErrorKind;
  CHECK(kind_of(gmail::token_outcome({OAuthErrorKind::invalid_grant, "invalid_grant"}, 0)) == "retry 60000");
  CHECK(kind_of(gmail::token_outcome({OAuthErrorKind::invalid_client, "invalid_client"}, 0)) == "retry 60000");
  CHECK(kind_of(gmail::token_outcome({OAuthErrorKind::unavailable, "503"}, 1)) == "retry 5000");
  CHECK(kind_of(gmail::token_outcome({OAuthErrorKind::malformed, "no access_token"}, 2)) == "retry 10000");
}

TEST_CASE("gmail decisions: how long a failed poll waits", "[gmail]") {
  struct Row {
    std::optional<ApiError> error;
    int failures;
    std::chrono::seconds interval;
    std::chrono::milliseconds delay;
  };
  const std::vector<Row> table{
      {std::nullopt, 1, 60s, 2s},  // a store or decode failure: the backoff alone
      {error(ApiErrorKind::server, 500), 2, 60s, 4s},
      {error(ApiErrorKind::server, 500), 30, 60s, 5min},
      {error(ApiErrorKind::server, 500), 30, 3600s, 5min},  // the backoff's cap, not the interval
      {error(ApiErrorKind::rate_limited, 429, 45s), 1, 60s, 45s},
      {error(ApiErrorKind::rate_limited, 429), 1, 60s, 30s},
      {error(ApiErrorKind::rate_limited, 429, 3600s), 1, 60s, 5min},  // never beyond max(interval, 5 min)
      {error(ApiErrorKind::rate_limited, 429, 3600s), 1, 1800s, 1800s},
  };
  for (const auto& row : table) {
    CAPTURE(row.failures, row.interval.count());
    CHECK(gmail::poll_delay(row.error, row.failures, row.interval) == row.delay);
  }
}
