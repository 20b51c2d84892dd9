#include "staff/search.h"

#include <cctype>
#include <chrono>
#include <cstdio>

#include "common/json_out.h"
#include "common/text.h"
#include "staff/json.h"

namespace dispatchd::staff {
namespace {

bool blank(const std::optional<std::string>& value) { return !value || value->empty(); }

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> positive(const std::string& text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::int64_t n = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  if (n <= 0) return std::nullopt;
  return n;
}

// The most a search matches on: longer text finds nothing a shorter one would not.
constexpr std::size_t k_max_search_text = 200;

}  // namespace

std::string customer_key(std::string_view typed) {
  const std::string_view value = trimmed(typed);
  if (value.find('@') != std::string_view::npos) return std::string(value);
  std::string out;
  for (const char c : value) {
    if (c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || (c == '+' && out.empty())) continue;
    out += c;
  }
  return out;
}

std::optional<std::string> next_day(std::string_view date) {
  if (date.size() != 10 || date[4] != '-' || date[7] != '-') return std::nullopt;
  for (const std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (date[i] < '0' || date[i] > '9') return std::nullopt;
  }
  const auto number = [&](std::size_t at, std::size_t n) {
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) v = v * 10 + (date[i] - '0');
    return v;
  };
  const std::chrono::year_month_day day{std::chrono::year(number(0, 4)),
                                        std::chrono::month(static_cast<unsigned>(number(5, 2))),
                                        std::chrono::day(static_cast<unsigned>(number(8, 2)))};
  if (!day.ok()) return std::nullopt;
  const std::chrono::year_month_day next{std::chrono::sys_days(day) + std::chrono::days(1)};
  char out[16];
  std::snprintf(out, sizeof out, "%04d-%02u-%02u", static_cast<int>(next.year()), static_cast<unsigned>(next.month()),
                static_cast<unsigned>(next.day()));
  return std::string(out);
}

std::expected<store::EscalationSearch, std::string> read_search(const SearchInput& input) {
  store::EscalationSearch out;
  out.limit = k_search_page_default;
  if (!blank(input.customer)) {
    out.customer = customer_key(*input.customer);
    if (out.customer->empty()) return std::unexpected("customer is a number or an address");
    if (out.customer->size() > k_max_search_text) return std::unexpected("customer is too long");
  }
  if (!blank(input.text)) {
    const std::string_view text = trimmed(*input.text);
    if (text.empty()) return std::unexpected("text is empty");
    if (text.size() > k_max_search_text)
      return std::unexpected("text is at most " + std::to_string(k_max_search_text) + " bytes");
    out.text = std::string(text);
  }
  if (!blank(input.reason)) {
    out.reason = store::from_sql<store::EscalationReason>(*input.reason);
    if (!out.reason) return std::unexpected("unknown reason " + text::quote(*input.reason));
  }
  if (!blank(input.status)) {
    out.status = store::from_sql<store::EscalationStatus>(*input.status);
    if (!out.status) return std::unexpected("status is open, claimed, resolved or dismissed");
  }
  if (!blank(input.from)) {
    if (!next_day(*input.from)) return std::unexpected("from is a date, YYYY-MM-DD");
    out.from = *input.from;
  }
  if (!blank(input.to)) {
    out.until = next_day(*input.to);
    if (!out.until) return std::unexpected("to is a date, YYYY-MM-DD");
  }
  if (out.from && out.until && *out.from >= *out.until) return std::unexpected("from is after to");
  if (!blank(input.before)) {
    out.before = positive(*input.before);
    if (!out.before) return std::unexpected("before is an escalation id");
  }
  if (!blank(input.limit)) {
    const auto n = positive(*input.limit);
    if (!n || *n > k_search_page_max) return std::unexpected("limit is 1 to " + std::to_string(k_search_page_max));
    out.limit = *n;
  }
  return out;
}

std::string history_json(const std::optional<std::vector<store::EscalationRow>>& cases,
                         const std::vector<store::CustomerMessage>& messages, bool more) {
  JsonOut out;
  out.begin_object();
  if (cases) {
    out.raw("cases", escalations_json(*cases));
  } else {
    out.field("cases", nullptr);
  }
  out.begin_array("messages");
  for (const auto& entry : messages) {
    const auto& m = entry.message;
    out.begin_object().field("message_id", m.id).field("conversation_id", m.conversation_id);
    out.field("received_at", m.received_at).field("text", m.text).field("escalation_id", entry.escalation_id);
    out.begin_array("replies");
    for (const auto& a : entry.replies) {
      out.begin_object().field("action_id", a.id).field("action", a.action).field("body", a.body);
      out.field("status", store::to_sql(a.status))
          .field("created_by", a.created_by)
          .field("updated_at", a.updated_at)
          .end_object();
    }
    out.end_array().end_object();
  }
  out.end_array();
  if (more && !messages.empty()) {
    out.field("next", messages.back().message.id);
  } else {
    out.field("next", nullptr);
  }
  return out.end_object().str();
}

}  // namespace dispatchd::staff
