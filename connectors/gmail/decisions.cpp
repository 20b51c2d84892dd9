#include "connectors/gmail/decisions.h"

#include <algorithm>

#include "common/backoff.h"

namespace dispatchd::gmail {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr Backoff k_poll_backoff{2s, 5min};
constexpr Backoff k_send_backoff{5s, 5min};
constexpr auto k_paused_retry = 60s;
constexpr auto k_rate_limit_default = 30s;

}  // namespace

connectors::SendOutcome send_outcome(const ApiError& error, int failures_in_a_row) {
  const std::string why = "users.messages.send: " + describe(error);
  switch (error.kind) {
    case ApiErrorKind::unreachable:
      return connectors::RetryAfter{exponential_backoff(k_send_backoff, failures_in_a_row), why};
    case ApiErrorKind::rate_limited:
      return connectors::RetryAfter{error.retry_after.value_or(k_rate_limit_default), why};
    case ApiErrorKind::unauthorized: return connectors::RetryAfter{k_paused_retry, why};
    case ApiErrorKind::server:
    case ApiErrorKind::uncertain: return connectors::Unknown{why};
    case ApiErrorKind::not_found:
    case ApiErrorKind::permanent: return connectors::Failed{why};
  }
  return connectors::Unknown{why};
}

connectors::SendOutcome token_outcome(const OAuthError& error, int failures_in_a_row) {
  if (permanent(error.kind)) return connectors::RetryAfter{k_paused_retry, "gmail paused: " + error.message};
  return connectors::RetryAfter{exponential_backoff(k_send_backoff, failures_in_a_row),
                                "no access token: " + error.message};
}

milliseconds poll_delay(const std::optional<ApiError>& error, int failures_in_a_row,
                        std::chrono::seconds poll_interval) {
  milliseconds delay = exponential_backoff(k_poll_backoff, failures_in_a_row);
  if (error && error->kind == ApiErrorKind::rate_limited)
    delay = std::max<milliseconds>(delay, error->retry_after.value_or(k_rate_limit_default));
  return std::min<milliseconds>(delay, std::max<milliseconds>(poll_interval, k_poll_backoff.max));
}

}  // namespace dispatchd::gmail
