#include "net/retry_after.h"

#include <array>
#include <charconv>

namespace dispatchd::net {
namespace {

using std::chrono::milliseconds;

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// All of `s` as a non-negative number of at most `max_digits` digits.
std::optional<long long> digits(std::string_view s, std::size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  long long n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc{} || end != s.data() + s.size() || n < 0) return std::nullopt;
  return n;
}

constexpr std::array<std::string_view, 12> k_months = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

std::optional<unsigned> month_of(std::string_view name) {
  for (std::size_t i = 0; i < k_months.size(); ++i)
    if (k_months[i] == name) return static_cast<unsigned>(i + 1);
  return std::nullopt;
}

// "HH:MM:SS" as seconds since midnight.
std::optional<long long> clock_of(std::string_view s) {
  if (s.size() != 8 || s[2] != ':' || s[5] != ':') return std::nullopt;
  const auto h = digits(s.substr(0, 2), 2), m = digits(s.substr(3, 2), 2), sec = digits(s.substr(6, 2), 2);
  if (!h || !m || !sec || *h > 23 || *m > 59 || *sec > 60) return std::nullopt;
  return *h * 3600 + *m * 60 + *sec;
}

std::optional<std::chrono::sys_seconds> at(long long year, std::optional<unsigned> month, long long day,
                                           std::optional<long long> clock) {
  if (!month || !clock || day < 1 || day > 31) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year(static_cast<int>(year)), std::chrono::month(*month),
                                         std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok()) return std::nullopt;
  return std::chrono::sys_days(date) + std::chrono::seconds(*clock);
}

// Splits on single spaces (asctime pads a one-digit day with a second space: "Nov  6").
std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const auto space = s.find(' ');
    if (space != 0) out.push_back(s.substr(0, space));
    if (space == std::string_view::npos) break;
    s.remove_prefix(space + 1);
  }
  return out;
}

std::optional<std::chrono::sys_seconds> http_date(std::string_view s) {
  const auto w = words(s);
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
  if (w.size() == 6 && w[0].size() == 4 && w[0].back() == ',' && w[5] == "GMT" && w[1].size() == 2 &&
      w[3].size() == 4) {
    const auto day = digits(w[1], 2), year = digits(w[3], 4);
    if (!day || !year) return std::nullopt;
    return at(*year, month_of(w[2]), *day, clock_of(w[4]));
  }
  // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT" (a two-digit year: 70 to 99 are 19xx, RFC 9110
  // asks to read a year more than 50 years ahead as the past century; these are the years
  // that can be).
  if (w.size() == 4 && w[0].back() == ',' && w[3] == "GMT" && w[1].size() == 9 && w[1][2] == '-' && w[1][6] == '-') {
    const auto day = digits(w[1].substr(0, 2), 2), yy = digits(w[1].substr(7, 2), 2);
    if (!day || !yy) return std::nullopt;
    return at(*yy >= 70 ? 1900 + *yy : 2000 + *yy, month_of(w[1].substr(3, 3)), *day, clock_of(w[2]));
  }
  // asctime: "Sun Nov  6 08:49:37 1994"
  if (w.size() == 5 && w[0].size() == 3 && w[4].size() == 4) {
    const auto day = digits(w[2], 2), year = digits(w[4], 4);
    if (!day || !year) return std::nullopt;
    return at(*year, month_of(w[1]), *day, clock_of(w[3]));
  }
  return std::nullopt;
}

}  // namespace

std::optional<milliseconds> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now) {
  value = trimmed(value);
  if (const auto seconds = digits(value, 9)) return std::chrono::seconds(*seconds);
  const auto date = http_date(value);
  if (!date) return std::nullopt;
  return std::max(std::chrono::ceil<milliseconds>(*date - now), milliseconds(0));
}

std::optional<milliseconds> retry_after_of(const Headers& headers, std::chrono::system_clock::time_point now) {
  if (const auto ms = headers.get("retry-after-ms")) {
    const auto whole = trimmed(*ms).substr(0, trimmed(*ms).find('.'));
    if (const auto value = digits(whole, 12)) return milliseconds(*value);
  }
  if (const auto value = headers.get("retry-after")) return parse_retry_after(*value, now);
  return std::nullopt;
}

std::optional<std::chrono::seconds> retry_after_seconds(const Headers& headers,
                                                        std::chrono::system_clock::time_point now) {
  const auto delay = retry_after_of(headers, now);
  if (!delay) return std::nullopt;
  return std::chrono::ceil<std::chrono::seconds>(*delay);
}

}  // namespace dispatchd::net
