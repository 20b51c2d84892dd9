#pragma once
// Graph API errors (a failed send, or the errors[] of a `failed` status webhook) and what
// dispatchd does about each. One table decides for both, so a synchronous refusal and an
// asynchronous one of the same code are handled the same way.
//
//   class          when                                            the daemon
//   window_closed  code 131047 (more than 24 h since the customer   fails the send for good:
//                  last wrote: free-form text is refused)           only a template could reach them
//   retry          codes 130429 (throughput), 131056 (pair rate),  sends again after retry_delay();
//                  4, 80007 (rate limits), 2, 131016 (service       the message waits in the outbox
//                  unavailable); HTTP 429; HTTP 5xx with a Graph
//                  error body, or 500/503 without one
//   auth           codes 0, 190 (token expired or invalid), 10 and  pauses all sending until the
//                  200..299 (permission); HTTP 401                  token is fixed
//   unknown        HTTP 2xx whose body is not a send result, or      never retries by itself: the
//                  502/504 without a Graph error (a gateway gave     message may have been sent
//                  up; Graph may have sent it)                       (delivery_unknown)
//   permanent      everything else (other 4xx, codes like 131026     fails the send with describe()
//                  undeliverable, 100 invalid parameter)
//
// Pure functions, no clock: delays are computed from what is passed in.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dispatchd::whatsapp {

struct GraphError {
  int http_status = 0;  // 0 when the error came from a webhook (a failed status event)
  std::optional<std::int64_t> code;
  std::optional<std::int64_t> subcode;  // error_subcode
  std::string type;                     // e.g. "OAuthException"
  std::string title;                    // webhook errors carry a title
  std::string message;
  std::string details;  // error_data.details
  std::string fbtrace_id;
};

enum class ErrorClass { window_closed, retry, auth, unknown, permanent };

// "window_closed", "retry", "auth", "unknown", "permanent".
const char* to_string(ErrorClass kind);

// The class of `error` by the table above.
ErrorClass classify(const GraphError& error);

// One line for the outbox's error column, the audit trail and logs, e.g.
// "graph error 131047 (http 400): Re-engagement message: <details>". Quotes no secrets
// (Graph errors never echo the access token).
std::string describe(const GraphError& error);

// How long to wait before the next attempt after `failures` consecutive retryable
// failures (1 for the first): 2 s doubling per failure up to 5 min (exponential_backoff,
// common/backoff.h), but never less than the code's own pace (131056: 6 s, one message
// per user every 6 s; 4 and 80007: 60 s) nor than the server's Retry-After
// (`retry_after`, honoured up to 24 h).
std::chrono::seconds retry_delay(const GraphError& error, int failures,
                                 std::optional<std::chrono::seconds> retry_after = std::nullopt);

}  // namespace dispatchd::whatsapp
