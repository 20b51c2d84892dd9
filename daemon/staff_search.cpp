#include "daemon/staff_search.h"

#include "common/text.h"
#include "daemon/staff_answers.h"
#include "staff/search.h"
#include "store/history.h"

namespace dispatchd::daemon {
namespace {

// Messages of a history page, by default and at most.
constexpr std::int64_t k_history_page_default = 30;
constexpr std::int64_t k_history_page_max = 200;

// `key`'s form-decoded value; the error names the key when its escapes are broken.
std::expected<std::optional<std::string>, std::string> form_value(std::string_view query, std::string_view key) {
  const auto raw = query_value(query, key);
  if (!raw) return std::nullopt;
  auto decoded = text::form_decode(*raw);
  if (!decoded) return std::unexpected(std::string(key) + " has a broken %-escape");
  return decoded;
}

// The next page's link: the same query with `before` moved, every value re-encoded.
std::string next_search_page(const staff::SearchInput& input, std::int64_t last) {
  std::string out = "/api/search?";
  const std::pair<const char*, const std::optional<std::string>*> values[] = {
      {"customer", &input.customer}, {"text", &input.text}, {"reason", &input.reason}, {"status", &input.status},
      {"from", &input.from},         {"to", &input.to},     {"limit", &input.limit}};
  for (const auto& [key, value] : values) {
    if (*value && !(*value)->empty()) out.append(key).append("=").append(text::percent_encode(**value)).append("&");
  }
  return out + "before=" + std::to_string(last);
}

}  // namespace

std::variant<Response, Read> search_request(std::string_view query, staff::TargetClock clock) {
  staff::SearchInput input;
  const std::pair<const char*, std::optional<std::string>*> keys[] = {
      {"customer", &input.customer}, {"text", &input.text}, {"reason", &input.reason}, {"status", &input.status},
      {"from", &input.from},         {"to", &input.to},     {"before", &input.before}, {"limit", &input.limit}};
  for (const auto& [key, member] : keys) {
    auto value = form_value(query, key);
    if (!value) return refusal(400, value.error());
    *member = std::move(*value);
  }
  auto search = staff::read_search(input);
  if (!search) return refusal(400, search.error());
  const std::int64_t limit = search->limit;
  search->limit = limit + 1;  // one more tells whether a next page exists
  return Read([search = *search, limit, input, clock](store::Database& db) {
    auto rows = store::search_escalations(db, search);
    if (!rows) return store_failure(rows.error());
    const bool more = static_cast<std::int64_t>(rows->size()) > limit;
    if (more) rows->pop_back();
    Response r = json(200, staff::escalations_json(*rows, clock));
    if (more) r.headers.emplace_back("Link", "<" + next_search_page(input, rows->back().id) + ">; rel=\"next\"");
    return r;
  });
}

std::variant<Response, Read> history_request(std::int64_t escalation_id, std::string_view query) {
  std::optional<std::int64_t> before;
  if (const auto text = query_value(query, "before"); text && !text->empty()) {
    before = parse_id(*text);
    if (!before) return refusal(400, "before is a message id");
  }
  std::int64_t limit = k_history_page_default;
  if (const auto text = query_value(query, "limit"); text && !text->empty()) {
    const auto n = parse_id(*text);
    if (!n || *n > k_history_page_max) return refusal(400, "limit is 1 to " + std::to_string(k_history_page_max));
    limit = *n;
  }
  return Read([escalation_id, before, limit](store::Database& db) {
    // The other cases come with the first page only: the older pages are the messages'.
    std::optional<std::vector<store::EscalationRow>> cases;
    if (!before) {
      auto rows = store::customer_escalations(db, escalation_id, staff::k_history_cases);
      if (!rows) return store_failure(rows.error());
      cases = std::move(*rows);
    }
    auto messages = store::customer_messages(db, escalation_id, before, limit + 1);
    if (!messages) return store_failure(messages.error());
    const bool more = static_cast<std::int64_t>(messages->size()) > limit;
    if (more) messages->pop_back();
    return json(200, staff::history_json(cases, *messages, more));
  });
}

}  // namespace dispatchd::daemon
