#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: the state of a turn's messages changes with its lead's
// (store/turns.h). The statements name the lead as ?1 and the turn with k_turn_of, and
// return the ids they changed, so that each message gets its audit event.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "store/internal/sql.h"

namespace dispatchd::store::internal {

// Message ?1 and the messages of its turn, by key: with `id = ?1 OR turn_id = ?1` SQLite
// walked inbox_ready for the statement's state instead (every decided message on each
// send's outcome, thousands under load: 2.6 times the CPU per message).
inline constexpr const char* k_turn_of =
    "id IN (SELECT CAST(?1 AS BIGINT) UNION ALL SELECT id FROM inbox WHERE turn_id = ?1)";

// Steps an UPDATE ... RETURNING id to its end: the ids it changed, lowest first.
inline Result<std::vector<std::int64_t>> changed_ids(Query& update) {
  std::vector<std::int64_t> ids;
  while (true) {
    auto row = update.step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    ids.push_back(update.integer(0));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace dispatchd::store::internal
