#include "store/replay.h"

#include "common/json_out.h"
#include "store/internal/sql.h"

namespace dispatchd::store {

Result<std::vector<ReplayKey>> replay_keys(Database& db, const ReplayPage& page) {
  auto query = Query::prepare(db,
                              "SELECT received_at, message_id FROM v_messages"
                              " WHERE (?1 IS NULL OR received_at >= ?1)"
                              " AND (?2 IS NULL OR (received_at, message_id) > (?2, ?3))"
                              " ORDER BY received_at, message_id LIMIT ?4");
  if (!query) return std::unexpected(query.error());
  query->bind(1, page.since);
  if (page.after) query->bind(2, page.after->received_at).bind(3, page.after->message_id);
  query->bind(4, page.messages);
  std::vector<ReplayKey> out;
  while (true) {
    auto row = query->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    out.push_back({query->text(0), query->integer(1)});
  }
}

Result<std::vector<RecordedMessage>> recorded_attempts(Database& db, std::span<const ReplayKey> keys) {
  // The ids as one JSON array bound once: one cached statement for any batch size.
  JsonOut ids;
  ids.begin_array();
  for (const auto& key : keys) ids.value(key.message_id);
  ids.end_array();
  auto query = Query::prepare(
      db,
      "SELECT m.message_id, m.channel, m.provider_message_id, m.sender, m.text, m.received_at,"
      " a.attempt, a.provider, a.model, a.raw_output, a.verdict, a.errors, a.error_class, a.finish_reason"
      " FROM json_each(?1) j JOIN v_messages m ON m.message_id = j.value"
      " JOIN v_attempts a ON a.message_id = m.message_id ORDER BY j.key, a.attempt");
  if (!query) return std::unexpected(query.error());
  query->bind(1, ids.str());
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
