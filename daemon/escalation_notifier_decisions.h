#pragma once
// The escalation notifier's pure decisions (daemon/escalation_notifier.h carries them out): what a
// receiver's answer means, how long to wait before trying again, and the JSON body.
// No I/O, no clock: table-tested in tests/daemon/escalation_notifier_decisions_test.cpp.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "net/http.h"
#include "store/escalation_feed.h"

namespace dispatchd::daemon {

enum class Delivery {
  delivered,  // 2xx: the cursor moves on
  retry,      // 408, 429, 5xx, or no answer (refused, timed out, reset): the same one again after a backoff
  permanent,  // any other status (3xx, 4xx): logged as an error naming it, counted failed; the cursor moves on
};

struct DeliveryVerdict {
  Delivery delivery = Delivery::retry;
  std::optional<std::chrono::seconds> retry_after;  // a retry's Retry-After (delta-seconds), when given
  std::string why;                                  // for the log: "HTTP 500", "connect_failed: ..."
};

DeliveryVerdict classify_delivery(const net::HttpResult& result);

// The wait before the next try after `failures` retryable failures in a row (1 for the
// first): 1 s doubling to 5 min, but at least the receiver's Retry-After, which is
// honoured up to one hour.
std::chrono::milliseconds notify_retry_delay(int failures, std::optional<std::chrono::seconds> retry_after);

inline constexpr std::size_t k_notify_text_points = 200;

// The first line of untrusted `text` (leading blank lines skipped), cut at a code point
// boundary to `max_points` code points, the last of which is "…" when cut.
std::string first_line(std::string_view text, std::size_t max_points = k_notify_text_points);

// `public_url` + "/staff/#/escalations/" + id; a trailing '/' of public_url is not doubled.
std::string case_url(std::string_view public_url, std::int64_t escalation_id);

// The POST body:
//   {"text":"dispatchd: escalation #12 (contract_failed) on whatsapp from 5215512345678: <first line>",
//    "event":"opened","escalation_id":12,"reason":"contract_failed","channel":"whatsapp","url":"<case_url>"}
// A breach (store::NotifyKind::breached) has "event":"breached" and its text says after the
// sender " is past its response target, still unclaimed".
// `text` is what Slack- and Mattermost-style incoming webhooks show. The customer's part
// (sender and first line) is untrusted: one line each, bounded, and &, < and > escaped as
// Slack asks (&amp; &lt; &gt;), so that a message cannot write a <!channel> ping or a
// <https://…|link> of its own into the channel.
std::string notification_body(const store::PendingEscalation& escalation, std::string_view public_url);

}  // namespace dispatchd::daemon
