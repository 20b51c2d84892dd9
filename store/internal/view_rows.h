#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: v_messages, v_actions and v_escalations rows read into a MessageRow, an
// ActionRow and an EscalationRow (store/views.h), shared by the staff reads (views.cpp,
// history.cpp) and the trail (trail.cpp) so that all read the same columns the same way. Like
// attempt_row.h for v_attempts. collect() reads any view's rows into a vector.

#include <type_traits>
#include <utility>
#include <vector>

#include "store/internal/sql.h"
#include "store/views.h"

namespace dispatchd::store {

// The select lists, in the rows' order; a query goes on with "FROM v_messages ..." or
// "FROM v_actions ...". Columns after these are the caller's own: read_message reads
// columns 0 to 8, read_action 0 to 10.
inline constexpr const char* k_message_columns =
    "SELECT message_id, channel, provider_message_id, conversation_id, sender, received_at, text, state, outcome ";
inline constexpr const char* k_action_columns =
    "SELECT action_id, message_id, action, arguments, recipient, body, status, created_by, provider_message_id, error,"
    " updated_at ";

// v_escalations with its message's channel, sender and text, as `e` and `m`; a query goes on
// with "WHERE ...". read_escalation reads its 15 columns.
inline constexpr const char* k_escalation_columns =
    "SELECT e.escalation_id, e.message_id, e.reason, e.detail, e.status, e.proposed_action, e.assignee, e.resolution,"
    " e.created_at, e.claimed_at, e.resolved_at, m.channel, m.sender, m.text, e.breach_noticed_at"
    " FROM v_escalations e JOIN v_messages m ON m.message_id = e.message_id ";

// Each fails only on a state this dispatchd does not know (Query::state).
[[nodiscard]] Result<EscalationRow> read_escalation(const Query& q);
[[nodiscard]] Result<MessageRow> read_message(const Query& q);
[[nodiscard]] Result<ActionRow> read_action(const Query& q);

// Steps `query` to the end, turning each row into a T with `read` (which returns a T or a
// Result<T>).
template <typename T, typename Read>
[[nodiscard]] Result<std::vector<T>> collect(Query& query, Read read) {
  std::vector<T> rows;
  while (true) {
    auto row = query.step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return rows;
    if constexpr (std::is_same_v<std::invoke_result_t<Read&, const Query&>, Result<T>>) {
      auto value = read(query);
      if (!value) return std::unexpected(value.error());
      rows.push_back(std::move(*value));
    } else {
      rows.push_back(read(query));
    }
  }
}

}  // namespace dispatchd::store
