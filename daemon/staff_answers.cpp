#include "daemon/staff_answers.h"

#include <charconv>

#include "common/json_out.h"

namespace dispatchd::daemon {

Response json(int status, std::string body) { return Response{status, std::move(body), k_json, {}, {}}; }

Response refusal(int status, const std::string& message, const std::optional<validator::Verdict>& verdict) {
  JsonOut out;
  out.begin_object().field("ok", false).field("error", message);
  out.raw_or_null("verdict", verdict ? std::optional<std::string>(validator::to_json(*verdict)) : std::nullopt);
  out.end_object();
  return json(status, out.str());
}

Response store_failure(const store::Error& e) {
  return refusal(e.kind == store::ErrorKind::not_found ? 404 : e.retryable() ? 503 : 500, e.message);
}

std::optional<std::int64_t> parse_id(std::string_view text) {
  std::int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) return std::nullopt;
  return id;
}

std::optional<std::string> query_value(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.size() > key.size() && pair.starts_with(key) && pair[key.size()] == '=')
      return std::string(pair.substr(key.size() + 1));
  }
  return std::nullopt;
}

}  // namespace dispatchd::daemon
