#pragma once
// The Gmail channel's decisions, as pure functions (table-tested in
// tests/connectors/gmail_decisions_test.cpp; channel.h carries them out):
//
//   send_outcome   what an answer of users.messages.send becomes for the outbox pump
//   token_outcome  what a send that could not get an access token becomes
//   poll_delay     how long a failed poll waits before the next

#include <chrono>
#include <optional>
#include <string>

#include "connectors/channel.h"
#include "connectors/gmail/api.h"
#include "connectors/gmail/oauth.h"

namespace dispatchd::gmail {

// `failures_in_a_row`: sends of the channel that did not reach Google, this one included
// (the backoff of an unreachable API).
//   unreachable          RetryAfter 5 s doubling to 5 min (it never reached Google)
//   rate_limited         RetryAfter the Retry-After, else 30 s
//   unauthorized         RetryAfter 60 s (a refreshed token was refused too)
//   server, uncertain    Unknown: it may have been sent; the channel looks it up
//   not_found, permanent Failed
connectors::SendOutcome send_outcome(const ApiError& error, int failures_in_a_row);

// A credential refused for good: RetryAfter 60 s (the channel is paused); otherwise the
// unreachable backoff over `failures_in_a_row`.
connectors::SendOutcome token_outcome(const OAuthError& error, int failures_in_a_row);

// 2 s doubling to 5 min over `failures_in_a_row`; a rate limit waits at least its
// Retry-After (30 s without one); never longer than max(poll_interval, 5 min).
std::chrono::milliseconds poll_delay(const std::optional<ApiError>& error, int failures_in_a_row,
                                     std::chrono::seconds poll_interval);

}  // namespace dispatchd::gmail
