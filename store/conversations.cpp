#include "store/conversations.h"

#include <algorithm>
#include <map>

#include "store/internal/sql.h"

namespace dispatchd::store {

Result<ConversationActivity> conversation_activity(Database& db, std::int64_t lead, Time since, std::size_t limit) {
  const auto arrival = [](const Query& q, int ms, int received) {
    const std::int64_t at = q.integer(ms);
    if (at > 0) return Instant{std::chrono::milliseconds(at)};
    return Instant(parse_time(q.text(received)).value_or(Time{}));
  };
  ConversationActivity out;
  // This turn: its first message and the ones that joined it.
  auto turn = Query::prepare(db, "SELECT max(arrived_ms), max(received_at) FROM inbox WHERE id = ?1 OR turn_id = ?1");
  if (!turn) return std::unexpected(turn.error());
  turn->bind(1, lead);
  auto row = turn->step();
  if (!row) return std::unexpected(row.error());
  if (!*row || turn->is_null(1)) return std::unexpected(Error::not_found("no message " + std::to_string(lead)));
  out.arrived = arrival(*turn, 0, 1);
  // The turns before it, newest first as walked, then put in order.
  auto earlier = Query::prepare(db,
                                "SELECT id, coalesce(turn_id, id), arrived_ms, received_at, text FROM inbox"
                                " WHERE conversation_id = (SELECT conversation_id FROM inbox WHERE id = ?1) AND id < ?1"
                                " ORDER BY id DESC LIMIT ?2");
  if (!earlier) return std::unexpected(earlier.error());
  earlier->bind(1, lead).bind(2, static_cast<std::int64_t>(limit));
  std::map<std::int64_t, ConversationActivity::Turn> turns;  // by the turn's first message
  const std::string oldest = format_time(since);
  while (true) {
    auto next = earlier->step();
    if (!next) return std::unexpected(next.error());
    if (!*next) break;
    if (earlier->text(3) < oldest) break;  // the store's time text sorts as time
    auto& t = turns[earlier->integer(1)];
    t.arrived = std::max(t.arrived, arrival(*earlier, 2, 3));
    t.text = t.text.empty() ? earlier->text(4) : earlier->text(4) + "\n" + t.text;
  }
  for (const auto& [first, t] : turns) {
    out.turns.push_back(t);
    auto replies = Query::prepare(db,
                                  "SELECT CASE WHEN status = 'sent' THEN updated_at ELSE created_at END, body"
                                  " FROM actions WHERE message_id = ?1 AND tool_server IS NULL"
                                  " AND status IN ('approved', 'sending', 'sent', 'unknown') ORDER BY id");
    if (!replies) return std::unexpected(replies.error());
    replies->bind(1, first);
    while (true) {
      auto next = replies->step();
      if (!next) return std::unexpected(next.error());
      if (!*next) break;
      out.replies.push_back(
          {Instant(parse_time(replies->text(0)).value_or(Time{})), replies->text(1), out.turns.size() - 1});
    }
  }
  return out;
}

Result<std::optional<ConversationHold>> conversation_hold(Database& db, const std::string& conversation_id) {
  auto query =
      Query::prepare(db, "SELECT escalation_id, reason, since FROM conversation_holds WHERE conversation_id = ?");
  if (!query) return std::unexpected(query.error());
  query->bind(1, conversation_id);
  auto row = query->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<ConversationHold>();
  auto reason = from_sql<EscalationReason>(query->text(1));
  if (!reason) return std::unexpected(Error{ErrorKind::corrupt, "conversation_holds.reason: " + query->text(1)});
  return std::optional<ConversationHold>(ConversationHold{query->integer(0), *reason, query->text(2)});
}

Result<void> hold_conversation(Database& db, const std::string& conversation_id, std::int64_t escalation_id,
                               EscalationReason reason, Time now) {
  auto insert = Query::prepare(db,
                               "INSERT INTO conversation_holds (conversation_id, escalation_id, reason, since)"
                               " VALUES (?, ?, ?, ?) ON CONFLICT (conversation_id) DO NOTHING");
  if (!insert) return std::unexpected(insert.error());
  insert->bind(1, conversation_id).bind(2, escalation_id).bind(3, reason).bind(4, format_time(now));
  return insert->run();
}

}  // namespace dispatchd::store
