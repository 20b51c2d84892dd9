#pragma once
// The server's requested delay before the next attempt, read once for every caller (the model
// providers, Graph, Gmail, the notification hooks): `Retry-After` (RFC 9110, 10.2.3) as
// delay-seconds or as an HTTP-date, and OpenAI's `retry-after-ms`. Pure: `now` is passed in.
//
// Capping the delay is the caller's decision (Graph honours up to 24 h, the model retries give
// up past llm's max_retry_after).

#include <chrono>
#include <optional>
#include <string_view>

#include "net/http.h"

namespace dispatchd::net {

// One Retry-After value: delay-seconds ("120", at most 9 digits) or an HTTP-date in any of
// its three forms (IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", the obsolete RFC 850
// "Sunday, 06-Nov-94 08:49:37 GMT" and asctime "Sun Nov  6 08:49:37 1994"), its distance from
// `now`; a date already past is 0. Surrounding spaces are ignored; anything else is nullopt.
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                           std::chrono::system_clock::time_point now);

// The delay a response asks for: `retry-after-ms` (whole milliseconds; a fraction is cut)
// when present and readable, else `Retry-After`; nullopt when neither says.
std::optional<std::chrono::milliseconds> retry_after_of(const Headers& headers,
                                                        std::chrono::system_clock::time_point now);

// The same in whole seconds, rounded up, for callers whose delays count seconds.
std::optional<std::chrono::seconds> retry_after_seconds(const Headers& headers,
                                                        std::chrono::system_clock::time_point now);

}  // namespace dispatchd::net
