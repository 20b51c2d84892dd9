#include "connectors/whatsapp/errors.h"

#include <algorithm>
#include <charconv>

#include "common/backoff.h"

namespace dispatchd::whatsapp {
namespace {

using std::chrono::seconds;

constexpr std::int64_t k_window_closed = 131047;
constexpr std::int64_t k_retry_codes[] = {130429, 131056, 4, 80007, 2, 131016};
constexpr seconds k_first_delay{2};
constexpr seconds k_max_backoff{300};
constexpr seconds k_max_retry_after{24 * 3600};

bool is_retry_code(std::int64_t code) { return std::ranges::find(k_retry_codes, code) != std::end(k_retry_codes); }

bool is_auth_code(std::int64_t code) { return code == 0 || code == 190 || code == 10 || (code >= 200 && code <= 299); }

seconds code_pace(const GraphError& error) {
  if (error.code == 131056) return seconds{6};
  if (error.code == 4 || error.code == 80007) return seconds{60};
  return seconds{0};
}

}  // namespace

const char* to_string(ErrorClass kind) {
  switch (kind) {
    case ErrorClass::window_closed: return "window_closed";
    case ErrorClass::retry: return "retry";
    case ErrorClass::auth: return "auth";
    case ErrorClass::unknown: return "unknown";
    case ErrorClass::permanent: return "permanent";
  }
  return "permanent";
}

ErrorClass classify(const GraphError& error) {
  const int status = error.http_status;
  if (error.code) {
    if (*error.code == k_window_closed) return ErrorClass::window_closed;
    if (is_retry_code(*error.code)) return ErrorClass::retry;
    if (is_auth_code(*error.code)) return ErrorClass::auth;
  }
  if (status == 401) return ErrorClass::auth;
  if (status == 429) return ErrorClass::retry;
  if (status >= 500 && status <= 599) {
    // Without a Graph error body a gateway answered; 502/504 mean it gave up waiting
    // for Graph, which may have sent the message all the same.
    if (!error.code && (status == 502 || status == 504)) return ErrorClass::unknown;
    return ErrorClass::retry;
  }
  if (status >= 200 && status <= 299) return ErrorClass::unknown;
  return ErrorClass::permanent;
}

std::string describe(const GraphError& error) {
  std::string out = "graph error";
  if (error.code) out += " " + std::to_string(*error.code);
  if (error.subcode) out += "/" + std::to_string(*error.subcode);
  if (error.http_status != 0) out += " (http " + std::to_string(error.http_status) + ")";
  const std::string& text = error.message.empty() ? error.title : error.message;
  if (!text.empty()) out += ": " + text;
  if (!error.details.empty() && error.details != text) out += ": " + error.details;
  if (!error.fbtrace_id.empty()) out += " [fbtrace_id " + error.fbtrace_id + "]";
  return out;
}

seconds retry_delay(const GraphError& error, int failures, std::optional<seconds> retry_after) {
  // Whole seconds: first and max are, and so is every doubling of them.
  const auto backoff =
      std::chrono::duration_cast<seconds>(exponential_backoff({k_first_delay, k_max_backoff}, std::max(failures, 1)));
  const seconds server = std::clamp(retry_after.value_or(seconds{0}), seconds{0}, k_max_retry_after);
  return std::max({backoff, code_pace(error), server});
}

}  // namespace dispatchd::whatsapp
