#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: v_messages and v_actions rows read into a MessageRow and an ActionRow
// (store/views.h), shared by the staff reads (views.cpp) and the trail (trail.cpp) so that
// both read the same columns the same way. Like attempt_row.h for v_attempts. collect()
// reads any view's rows into a vector (views.cpp, desk.cpp).

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

MessageRow read_message(const Query& q);
ActionRow read_action(const Query& q);

// Steps `query` to the end, turning each row into a T with `read`.
template <typename T, typename Read>
Result<std::vector<T>> collect(Query& query, Read read) {
  std::vector<T> rows;
  while (true) {
    auto row = query.step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return rows;
    rows.push_back(read(query));
  }
}

}  // namespace dispatchd::store
