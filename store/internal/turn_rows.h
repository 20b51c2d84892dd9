#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: the state of a turn's messages changes with its lead's
// (store/turns.h). Each change is one UPDATE for the lead, by key, as before turns, and,
// only when the lead heads a turn of several (a take set its turn_id), a second one for the
// other messages, through inbox_turn. Most turns are one message: a single statement that
// found the lead and its turn at once (`id IN (?1, the turn's ids)`, with RETURNING) cost
// that common case about 65,000 more instructions per change, on every decision and every
// send's outcome (bench/, callgrind of the daemon benchmark).

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/internal/sql.h"

namespace dispatchd::store::internal {

// The two statements of one change: "<head> id = ?1 <tail>" for the lead, and "<head>
// turn_id = ?1 AND id > ?1 <tail> RETURNING id" for the rest of its turn (a turn's other
// messages come after its lead). ?1 is the lead; the change's own values are ?2 and on.
struct TurnChange {
  std::string lead;
  std::string members;
};

inline TurnChange turn_change(std::string_view head, std::string_view tail) {
  return {std::string(head) + "id = ?1" + std::string(tail),
          std::string(head) + "turn_id = ?1 AND id > ?1" + std::string(tail) + " RETURNING id"};
}

// Runs `change` for message `lead` and its turn; `bind` binds ?2 and on. Returns the ids it
// changed, lowest first (the lead first when it changed).
template <typename Bind>
[[nodiscard]] Result<std::vector<std::int64_t>> change_turn(Database& db, const TurnChange& change, std::int64_t lead,
                                                            Bind bind) {
  std::vector<std::int64_t> ids;
  {
    auto update = Query::prepare(db, change.lead);
    if (!update) return std::unexpected(update.error());
    update->bind(1, lead);
    bind(*update);
    DISPATCHD_TRY(update->run());
    if (update->changes() == 1) ids.push_back(lead);
  }
  {  // ended before the UPDATE below
    auto turn = Query::prepare(db, "SELECT turn_id FROM inbox WHERE id = ?1");
    if (!turn) return std::unexpected(turn.error());
    turn->bind(1, lead);
    auto row = turn->step();
    if (!row) return std::unexpected(row.error());
    if (!*row || turn->is_null(0)) return ids;
  }
  auto members = Query::prepare(db, change.members);
  if (!members) return std::unexpected(members.error());
  members->bind(1, lead);
  bind(*members);
  while (true) {
    auto changed = members->step();
    if (!changed) return std::unexpected(changed.error());
    if (!*changed) break;
    ids.push_back(members->integer(0));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace dispatchd::store::internal
