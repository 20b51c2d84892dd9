#include "store/history.h"

#include <limits>
#include <map>

#include "store/internal/sql.h"
#include "store/internal/view_rows.h"

namespace dispatchd::store {
namespace {

// A LIKE pattern for "contains `value`", with `!` as the escape character: the value's own
// %, _ and ! match themselves. Compared as lower(column) LIKE lower(pattern), so that the
// same function folds the case of both sides on each backend.
std::string contains_pattern(const std::string& value) {
  std::string out = "%";
  for (const char c : value) {
    if (c == '%' || c == '_' || c == '!') out += '!';
    out += c;
  }
  return out + "%";
}

struct Customer {
  std::string channel;
  std::string sender;
};

// The customer of escalation `id`; not_found without it.
Result<Customer> customer_of(Database& db, std::int64_t id) {
  auto query = Query::prepare(db,
                              "SELECT m.channel, m.sender FROM v_escalations e JOIN v_messages m"
                              " ON m.message_id = e.message_id WHERE e.escalation_id = ?");
  if (!query) return std::unexpected(query.error());
  query->bind(1, id);
  auto row = query->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::unexpected(Error::not_found("no escalation " + std::to_string(id)));
  return Customer{query->text(0), query->text(1)};
}

}  // namespace

Result<std::vector<EscalationRow>> search_escalations(Database& db, const EscalationSearch& search) {
  // Only the search's conditions, written out, numbered in the order they appear (as
  // list_escalations does, store/views.cpp).
  std::string where = db.backend() == Backend::postgresql ? "WHERE true" : "WHERE 1";
  int parameters = 0;
  const auto next = [&parameters] { return "?" + std::to_string(++parameters); };
  if (search.customer) where += " AND lower(m.sender) LIKE lower(" + next() + ") ESCAPE '!'";
  if (search.text) {
    const std::string p = next();
    where += " AND (lower(m.text) LIKE lower(" + p + ") ESCAPE '!' OR EXISTS (SELECT 1 FROM v_notes n" +
             " WHERE n.escalation_id = e.escalation_id AND lower(n.text) LIKE lower(" + p + ") ESCAPE '!'))";
  }
  if (search.reason) where += " AND e.reason = " + next();
  if (search.status) where += " AND e.status = " + next();
  if (search.from) where += " AND e.created_at >= " + next();
  if (search.until) where += " AND e.created_at < " + next();
  if (search.before)
    where +=
        " AND (e.created_at, e.escalation_id) < (SELECT created_at, id FROM escalations WHERE id = " + next() + ")";
  const std::string limit = next();
  auto query = Query::prepare(db, std::string(k_escalation_columns) + where +
                                      " ORDER BY e.created_at DESC, e.escalation_id DESC LIMIT " + limit);
  if (!query) return std::unexpected(query.error());
  int bound = 0;
  if (search.customer) query->bind(++bound, contains_pattern(*search.customer));
  if (search.text) query->bind(++bound, contains_pattern(*search.text));
  if (search.reason) query->bind(++bound, *search.reason);
  if (search.status) query->bind(++bound, *search.status);
  if (search.from) query->bind(++bound, *search.from);
  if (search.until) query->bind(++bound, *search.until);
  if (search.before) query->bind(++bound, *search.before);
  query->bind(++bound, search.limit);
  return collect<EscalationRow>(*query, read_escalation);
}

Result<std::vector<EscalationRow>> customer_escalations(Database& db, std::int64_t id, std::int64_t limit) {
  auto customer = customer_of(db, id);
  if (!customer) return std::unexpected(customer.error());
  // A message whose sender could not be read (an undecodable email) has none: its "history"
  // would be every other such message.
  if (customer->sender.empty()) return std::vector<EscalationRow>{};
  auto query = Query::prepare(db, std::string(k_escalation_columns) +
                                      "WHERE m.channel = ?1 AND m.sender = ?2 AND e.escalation_id <> ?3"
                                      " ORDER BY e.created_at DESC, e.escalation_id DESC LIMIT ?4");
  if (!query) return std::unexpected(query.error());
  query->bind(1, customer->channel).bind(2, customer->sender).bind(3, id).bind(4, limit);
  return collect<EscalationRow>(*query, read_escalation);
}

Result<std::vector<CustomerMessage>> customer_messages(Database& db, std::int64_t id,
                                                       std::optional<std::int64_t> before, std::int64_t limit) {
  auto customer = customer_of(db, id);
  if (!customer) return std::unexpected(customer.error());
  if (customer->sender.empty()) return std::vector<CustomerMessage>{};
  const std::int64_t below = before.value_or(std::numeric_limits<std::int64_t>::max());
  constexpr const char* k_page =
      "SELECT message_id FROM v_messages WHERE channel = ?1 AND sender = ?2 AND message_id < ?3"
      " ORDER BY message_id DESC LIMIT ?4";
  std::vector<CustomerMessage> out;
  {
    auto query = Query::prepare(
        db, std::string(k_message_columns) +
                ", (SELECT max(e.escalation_id) FROM v_escalations e WHERE e.message_id = v_messages.message_id)"
                " FROM v_messages WHERE message_id IN (" +
                k_page + ") ORDER BY message_id DESC");
    if (!query) return std::unexpected(query.error());
    query->bind(1, customer->channel).bind(2, customer->sender).bind(3, below).bind(4, limit);
    auto rows = collect<CustomerMessage>(*query, [](const Query& q) -> Result<CustomerMessage> {
      auto message = read_message(q);
      if (!message) return std::unexpected(message.error());
      return CustomerMessage{std::move(*message), {}, q.optional_integer(9)};
    });
    if (!rows) return std::unexpected(rows.error());
    out = std::move(*rows);
  }
  if (out.empty()) return out;
  auto query = Query::prepare(db, std::string(k_action_columns) + "FROM v_actions WHERE message_id IN (" + k_page +
                                      ") AND status NOT IN ('proposed', 'rejected') ORDER BY action_id");
  if (!query) return std::unexpected(query.error());
  query->bind(1, customer->channel).bind(2, customer->sender).bind(3, below).bind(4, limit);
  auto actions = collect<ActionRow>(*query, read_action);
  if (!actions) return std::unexpected(actions.error());
  std::map<std::int64_t, std::size_t> at;
  for (std::size_t i = 0; i < out.size(); ++i) at[out[i].message.id] = i;
  for (auto& a : *actions) {
    if (const auto it = at.find(a.message_id); it != at.end()) out[it->second].replies.push_back(std::move(a));
  }
  return out;
}

}  // namespace dispatchd::store
