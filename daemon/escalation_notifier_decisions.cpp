#include "daemon/escalation_notifier_decisions.h"

#include <algorithm>

#include "common/backoff.h"
#include "common/json_out.h"
#include "common/utf8.h"
#include "net/retry_after.h"

namespace dispatchd::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr Backoff k_backoff{seconds(1), std::chrono::minutes(5)};
constexpr seconds k_max_retry_after{3600};
constexpr std::size_t k_sender_points = 80;

// Slack's three control characters; everything else is shown as written.
std::string slack_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

}  // namespace

DeliveryVerdict classify_delivery(const net::HttpResult& result) {
  if (!result)
    return {Delivery::retry, std::nullopt,
            std::string(net::to_string(result.error().kind)) + ": " + result.error().message};
  const int status = result->status;
  std::string why = "HTTP " + std::to_string(status);
  if (status >= 200 && status < 300) return {Delivery::delivered, std::nullopt, std::move(why)};
  if (status == 408 || status == 429 || status >= 500) {
    return {Delivery::retry, net::retry_after_seconds(result->headers, std::chrono::system_clock::now()),
            std::move(why)};
  }
  return {Delivery::permanent, std::nullopt, std::move(why)};
}

milliseconds notify_retry_delay(int failures, std::optional<seconds> retry_after) {
  const milliseconds backoff = exponential_backoff(k_backoff, std::max(failures, 1));
  if (!retry_after) return backoff;
  return std::max<milliseconds>(backoff, std::clamp(*retry_after, seconds(0), k_max_retry_after));
}

std::string first_line(std::string_view text, std::size_t max_points) {
  const auto start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || max_points == 0) return "";
  text.remove_prefix(start);
  text = text.substr(0, text.find_first_of("\r\n"));
  // Stored text is valid UTF-8; should a byte not be, the line ends before it rather than
  // carry it into the JSON.
  if (const auto bad = utf8::first_invalid(text)) text = text.substr(0, *bad);
  if (utf8::code_points(text) <= max_points) return std::string(text);
  return std::string(utf8::prefix(text, max_points - 1)) + "…";
}

std::string case_url(std::string_view public_url, std::int64_t escalation_id) {
  while (public_url.ends_with('/')) public_url.remove_suffix(1);
  return std::string(public_url) + "/staff/#/escalations/" + std::to_string(escalation_id);
}

std::string notification_body(const store::PendingEscalation& e, std::string_view public_url) {
  const std::string_view reason = store::to_sql(e.reason);
  const bool breached = e.kind == store::NotifyKind::breached;
  std::string text = "dispatchd: escalation #" + std::to_string(e.escalation_id) + " (" + std::string(reason) +
                     ") on " + e.channel + " from " + slack_escape(first_line(e.sender, k_sender_points));
  if (breached) text += " is past its response target, still unclaimed";
  if (const std::string line = first_line(e.text); !line.empty()) text += ": " + slack_escape(line);
  return JsonOut()
      .begin_object()
      .field("text", text)
      .field("event", std::string_view(breached ? "breached" : "opened"))
      .field("escalation_id", e.escalation_id)
      .field("reason", reason)
      .field("channel", e.channel)
      .field("url", case_url(public_url, e.escalation_id))
      .end_object()
      .str();
}

}  // namespace dispatchd::daemon
