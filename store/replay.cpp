#include "store/replay.h"

#include "store/internal/sql.h"

namespace dispatchd::store {

Result<std::vector<RecordedMessage>> recorded_attempts(Database& db, const ReplayPage& page) {
  // The page's messages first, then their attempts: a page ends on a message boundary, so
  // the keyset never splits a message's attempts between two pages.
  auto query = Query::prepare(
      db,
      "WITH page AS (SELECT m.message_id, m.received_at FROM v_messages m"
      "  WHERE (?1 IS NULL OR m.received_at >= ?1)"
      "    AND (?2 IS NULL OR (m.received_at, m.message_id) > (?2, ?3))"
      "    AND EXISTS (SELECT 1 FROM v_attempts x WHERE x.message_id = m.message_id)"
      "  ORDER BY m.received_at, m.message_id LIMIT ?4)"
      " SELECT m.message_id, m.channel, m.provider_message_id, m.sender, m.text, m.received_at,"
      "  a.attempt, a.provider, a.model, a.raw_output, a.verdict, a.errors, a.error_class, a.finish_reason"
      " FROM page p JOIN v_messages m ON m.message_id = p.message_id"
      " JOIN v_attempts a ON a.message_id = p.message_id"
      " ORDER BY p.received_at, p.message_id, a.attempt");
  if (!query) return std::unexpected(query.error());
  query->bind(1, page.since);
  if (page.after) query->bind(2, page.after->received_at).bind(3, page.after->message_id);
  query->bind(4, page.messages);
  std::vector<RecordedMessage> out;
  while (true) {
    auto row = query->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    const std::int64_t id = query->integer(0);
    if (out.empty() || out.back().id != id)
      out.push_back({id, query->text(1), query->text(2), query->text(3), query->text(4), query->text(5), {}});
    const auto verdict = from_sql<Verdict>(query->text(10));
    if (!verdict) return std::unexpected(Error::internal("attempt with an unknown verdict: " + query->text(10)));
    out.back().attempts.push_back({query->integer(6), query->text(7), query->text(8), query->optional_text(9), *verdict,
                                   query->text(11), query->optional_text(12), query->optional_text(13)});
  }
}

}  // namespace dispatchd::store
