// Taking messages: take_next (store/inbox.h), and by turns, take_turn and join_turn
// (store/turns.h).
#include <algorithm>

#include "store/inbox.h"
#include "store/internal/locks.h"
#include "store/internal/sql.h"
#include "store/turns.h"

namespace dispatchd::store {
namespace {

// How many waiting conversations one take looks at before it gives up for now: past that
// it takes again soon (a burst of bursts, far above what a loop round needs).
constexpr int k_max_scanned = 1000;

// Columns 0 to 8, read by found_of; a query's own columns come after.
const std::string k_columns =
    "SELECT m.id, m.conversation_id, m.sender, m.text, m.channel, m.received_at, coalesce(m.message_type, ''),"
    " m.turn_id, m.provider_message_id";
constexpr const char* k_unblocked =
    " AND NOT EXISTS (SELECT 1 FROM inbox e WHERE e.conversation_id = m.conversation_id"
    "                 AND e.id < m.id AND e.state IN ('received', 'processing'))";

const char* locked(Backend b) { return b == Backend::postgresql ? " FOR NO KEY UPDATE OF m SKIP LOCKED" : ""; }

// A lead as the scan found it: the message, and whether a previous take made it a turn's.
struct Found : Leased {
  bool has_turn = false;
};

Found found_of(const Query& q, Time fallback) {
  Found found;
  static_cast<Leased&>(found) = Leased{
      q.integer(0), q.text(1), q.text(2), q.text(3), q.text(4), parse_time(q.text(5)).value_or(fallback), q.text(6)};
  found.has_turn = !q.is_null(7);
  found.provider_message_id = q.text(8);
  return found;
}

// The oldest message whose lease expired and that no earlier unfinished message of its
// conversation blocks.
Result<std::optional<Found>> scan_expired(Database& db, Time now) {
  auto expired = Query::prepare(db, per_backend(db.backend(), [&](Backend b) {
                                  return k_columns + " FROM inbox m WHERE m.state = 'processing' AND" +
                                         " m.lease_expires_at <= ?1" + k_unblocked + " ORDER BY m.id LIMIT 1" +
                                         locked(b);
                                }));
  if (!expired) return std::unexpected(expired.error());
  expired->bind(1, format_time(now));
  auto row = expired->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<Found>();
  return std::optional<Found>(found_of(*expired, now));
}

// The oldest message ready to take (take_next's comment), or nothing. On PostgreSQL each of
// its two queries locks the row it returns and skips rows another taker holds.
Result<std::optional<Found>> scan_ready(Database& db, Time now) {
  auto received = Query::prepare(db, per_backend(db.backend(), [&](Backend b) {
                                   return k_columns + " FROM inbox m WHERE m.state = 'received'" + k_unblocked +
                                          " ORDER BY m.id LIMIT 1" + locked(b);
                                 }));
  if (!received) return std::unexpected(received.error());
  auto received_row = received->step();
  if (!received_row) return std::unexpected(received_row.error());
  auto expired = scan_expired(db, now);
  if (!expired) return std::unexpected(expired.error());
  if (!*received_row) return expired;
  if (*expired && (*expired)->id < received->integer(0)) return expired;
  return std::optional<Found>(found_of(*received, now));
}

// The oldest conversation whose turn is ready (turn_ready_at), or the soonest one may be
// (`wake_at`). Walks the received messages that no earlier unfinished one blocks, oldest
// arrival first, through inbox_arrived: a message younger than `quiet` cannot lead a ready
// turn, so those are never read.
Result<std::optional<Found>> scan_quiet(Database& db, Instant now, const TurnRule& rule,
                                        std::optional<Instant>& wake_at) {
  const auto soonest = [&](Instant at) { wake_at = wake_at ? std::min(*wake_at, at) : at; };
  const std::int64_t cut = (now - rule.quiet).time_since_epoch().count();
  auto scan = Query::prepare(
      db, per_backend(db.backend(), [&](Backend b) {
        return k_columns +
               ", m.arrived_ms, (SELECT max(q.arrived_ms) FROM inbox q WHERE q.conversation_id = m.conversation_id"
               "                AND q.state IN ('received', 'processing'))"
               " FROM inbox m" +
               (b == Backend::sqlite ? " INDEXED BY inbox_arrived" : "") +
               " WHERE m.state = 'received' AND m.arrived_ms <= ?1" + k_unblocked + " ORDER BY m.arrived_ms, m.id" +
               locked(b);
      }));
  if (!scan) return std::unexpected(scan.error());
  scan->bind(1, cut);
  for (int scanned = 0; scanned < k_max_scanned; ++scanned) {
    auto row = scan->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    const Instant first{std::chrono::milliseconds(scan->integer(9))};
    const Instant last{std::chrono::milliseconds(scan->integer(10))};
    const Instant ready = turn_ready_at(first, last, rule);
    if (ready <= now) return std::optional<Found>(found_of(*scan, std::chrono::floor<std::chrono::seconds>(now)));
    soonest(ready);
  }
  // The messages still inside their quiet time: the oldest of them is ready `quiet` after
  // it arrived at the soonest.
  auto younger = Query::prepare(db, "SELECT min(arrived_ms) FROM inbox WHERE state = 'received' AND arrived_ms > ?1");
  if (!younger) return std::unexpected(younger.error());
  younger->bind(1, cut);
  auto row = younger->step();
  if (!row) return std::unexpected(row.error());
  if (*row && !younger->is_null(0)) soonest(Instant{std::chrono::milliseconds(younger->integer(0))} + rule.quiet);
  return std::optional<Found>();
}

Result<void> lease_to(Database& db, std::int64_t id, const std::string& worker, Time until) {
  auto update =
      Query::prepare(db, "UPDATE inbox SET state = 'processing', lease_owner = ?, lease_expires_at = ? WHERE id = ?");
  if (!update) return std::unexpected(update.error());
  update->bind(1, worker).bind(2, format_time(until)).bind(3, id);
  return update->run();
}

// PostgreSQL: locks message `id` if it is still ready to take; false when it is not, or
// another taker holds it.
Result<bool> relock_ready(Database& db, std::int64_t id, Time now) {
  auto relock = Query::prepare(db,
                               "SELECT 1 FROM inbox WHERE id = ?1 AND (state = 'received' OR (state = 'processing'"
                               " AND lease_expires_at <= ?2)) FOR NO KEY UPDATE SKIP LOCKED");
  if (!relock) return std::unexpected(relock.error());
  relock->bind(1, id).bind(2, format_time(now));
  return relock->step();
}

// Joins to `lead`'s turn, under its lease (lead.lease_token), the messages after `after` in
// its conversation: those a previous take joined to it, then, with `received`, unanswered
// ones that may join, in order, up to the turn's size; the first that may not ends it.
Result<std::vector<TurnMessage>> join(Database& db, const Leased& lead, std::int64_t after, const std::string& worker,
                                      const TurnRule& rule, bool received) {
  const std::size_t room = rule.max_messages > 1 + lead.joined.size() ? rule.max_messages - 1 - lead.joined.size() : 0;
  std::vector<TurnMessage> out;
  if (room == 0) return out;
  {  // read to the end of this block: the UPDATE below changes the rows it walks
    auto candidates = Query::prepare(
        db, per_backend(db.backend(), [](Backend b) {
          return std::string(
                     "SELECT id, text, coalesce(message_type, ''), channel, turn_id, provider_message_id FROM inbox"
                     " WHERE conversation_id = ?1 AND id > ?2 AND state IN ('received', 'processing')"
                     " AND (state = 'received' OR turn_id = ?3) ORDER BY id LIMIT ?4") +
                 (b == Backend::postgresql ? " FOR NO KEY UPDATE" : "");
        }));
    if (!candidates) return std::unexpected(candidates.error());
    candidates->bind(1, lead.conversation_id).bind(2, after).bind(3, lead.id).bind(4, static_cast<std::int64_t>(room));
    while (true) {
      auto row = candidates->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) break;
      // Joined by an earlier take (or replayed: received again with its turn kept).
      const bool joined_before = candidates->optional_integer(4) == lead.id;
      if (!joined_before && (!received || (rule.joins && !rule.joins(candidates->text(3), candidates->text(2))))) break;
      out.push_back({candidates->integer(0), candidates->text(1), candidates->text(2), candidates->text(5)});
    }
  }
  if (out.empty()) return out;
  auto update = Query::prepare(db,
                               "UPDATE inbox SET state = 'processing', lease_owner = ?1, lease_expires_at = ?2,"
                               " turn_id = ?3 WHERE conversation_id = ?4 AND id > ?5 AND id <= ?6"
                               " AND state IN ('received', 'processing') AND (state = 'received' OR turn_id = ?3)");
  if (!update) return std::unexpected(update.error());
  update->bind(1, worker).bind(2, lead.lease_token).bind(3, lead.id).bind(4, lead.conversation_id);
  update->bind(5, after).bind(6, out.back().id);
  DISPATCHD_TRY(update->run());
  auto mark = Query::prepare(db, "UPDATE inbox SET turn_id = id WHERE id = ?1 AND turn_id IS NULL");
  if (!mark) return std::unexpected(mark.error());
  mark->bind(1, lead.id);
  DISPATCHD_TRY(mark->run());
  return out;
}

bool may_lead(const Leased& m, const TurnRule& rule) { return !rule.joins || rule.joins(m.channel, m.type); }

}  // namespace

Instant turn_ready_at(Instant first, Instant last, const TurnRule& rule) {
  return std::min(last + rule.quiet, first + std::max(rule.max, rule.quiet));
}

Result<TakenTurn> take_turn(Database& db, const std::string& worker, Instant now, std::chrono::seconds lease,
                            const TurnRule& rule) {
  return transaction<TakenTurn>(db, [&]() -> Result<TakenTurn> {
    // Ready: received, or processing with an expired lease; and no earlier message of the
    // same conversation still unfinished (ordering per conversation). Two queries, each
    // walking an index in order and stopping at the first hit, rather than one with an OR
    // that sorts the whole backlog on every call.
    //
    // Several instances on PostgreSQL: each query locks the row it finds and skips rows
    // another taker holds, so no message is taken twice; a row taken and committed since
    // the query began fails its WHERE when re-read under the lock. Neither lets two
    // messages of one conversation be in progress at once: the earlier one blocks the later
    // one while it is received or processing in the statement's snapshot, and it never
    // returns to those states once decided or done. (Ids follow commit order:
    // insert_inbound takes its id under the audit tail's lock.)
    //
    // A row that fails that re-read stays locked by us all the same, and so does the row of
    // the query whose hit we do not take: internal::pick_locked drops those stray locks
    // (they deadlocked three instances) and locks only the chosen row again, if it is still
    // ready. FOR NO KEY UPDATE rather than FOR UPDATE: the foreign key checks of rows that
    // name the message (attempts, actions, audit) never wait for a taker's lock.
    const Time now_s = std::chrono::floor<std::chrono::seconds>(now);
    const bool bursts = rule.quiet.count() > 0;
    TakenTurn out;
    auto found = internal::pick_locked<Found>(
        db,
        [&]() -> Result<std::optional<Found>> {
          if (!bursts) return scan_ready(db, now_s);
          out.wake_at.reset();
          auto quiet = scan_quiet(db, now, rule, out.wake_at);
          if (!quiet) return quiet;
          auto expired = scan_expired(db, now_s);
          if (!expired || !*expired) return quiet ? quiet : expired;
          if (!*quiet || (*expired)->id < (*quiet)->id) return expired;
          return quiet;
        },
        [&](std::int64_t id) { return relock_ready(db, id, now_s); });
    if (!found) return std::unexpected(found.error());
    if (!*found) return out;
    out.wake_at.reset();
    Leased taken = std::move(static_cast<Leased&>(**found));
    DISPATCHD_TRY(lease_to(db, taken.id, worker, now_s + lease));
    taken.lease_token = format_time(now_s + lease);
    if ((*found)->has_turn || (bursts && may_lead(taken, rule))) {
      auto joined = join(db, taken, taken.id, worker, rule, bursts && may_lead(taken, rule));
      if (!joined) return std::unexpected(joined.error());
      taken.joined = std::move(*joined);
    }
    out.taken = std::move(taken);
    return out;
  });
}

Result<std::optional<Leased>> take_next(Database& db, const std::string& worker, Time now, std::chrono::seconds lease) {
  auto taken = take_turn(db, worker, now, lease, {});
  if (!taken) return std::unexpected(taken.error());
  return std::move(taken->taken);
}

Result<std::vector<TurnMessage>> join_turn(Database& db, Leased& lead, const std::string& worker,
                                           const TurnRule& rule) {
  if (rule.quiet.count() == 0 || !may_lead(lead, rule)) return std::vector<TurnMessage>();
  const std::int64_t after = lead.joined.empty() ? lead.id : lead.joined.back().id;
  auto joined = join(db, lead, after, worker, rule, true);
  if (!joined) return joined;
  lead.joined.insert(lead.joined.end(), joined->begin(), joined->end());
  return joined;
}

}  // namespace dispatchd::store
