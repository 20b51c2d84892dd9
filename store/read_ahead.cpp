#include "store/read_ahead.h"

#include "store/internal/sql.h"

namespace dispatchd::store {
namespace {

// Runs `query` to its end, reading every column: a long text's overflow pages are read
// only when the column is.
Result<void> read_all(Query& query, int columns) {
  for (;;) {
    auto row = query.step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return {};
    for (int c = 0; c < columns; ++c) {
      [[maybe_unused]] const auto text = query.text(c);
    }
  }
}

Result<void> read_message_ahead(Database& db, const InboundMessage& m, std::size_t history) {
  auto known = Query::prepare(db, "SELECT id FROM inbox WHERE channel = ? AND provider_message_id = ?");
  if (!known) return std::unexpected(known.error());
  known->bind(1, m.channel).bind(2, m.provider_message_id);
  DISPATCHD_TRY(read_all(*known, 1));
  auto last = Query::prepare(db, "SELECT max(received_at) FROM inbox WHERE channel = ? AND sender = ?");
  if (!last) return std::unexpected(last.error());
  last->bind(1, m.channel).bind(2, m.sender);
  DISPATCHD_TRY(read_all(*last, 1));
  // Where the reply's action will go in actions_recipient: the sender's place, anywhere.
  auto replies = Query::prepare(db, "SELECT max(id) FROM actions WHERE recipient = ?");
  if (!replies) return std::unexpected(replies.error());
  replies->bind(1, m.sender);
  DISPATCHD_TRY(read_all(*replies, 1));
  // store::history's rows, for a message not stored yet: the conversation's newest.
  auto recent = Query::prepare(db,
                               "WITH recent AS ("
                               "  SELECT id, received_at, text FROM inbox WHERE conversation_id = ?1"
                               "  ORDER BY id DESC LIMIT ?2)"
                               "SELECT r.received_at, r.text, a.updated_at, a.body, a.status"
                               " FROM recent r LEFT JOIN actions a ON a.message_id = r.id");
  if (!recent) return std::unexpected(recent.error());
  recent->bind(1, m.conversation_id).bind(2, static_cast<std::int64_t>(history));
  return read_all(*recent, 5);
}

Result<void> read_report(Database& db, const DeliveryReport& report) {
  auto action =
      Query::prepare(db,
                     "SELECT a.status, i.state FROM actions a JOIN inbox i ON i.id = a.message_id"
                     " WHERE (?1 <> '' AND a.provider_message_id = ?1) OR (?2 <> '' AND a.idempotency_key = ?2)");
  if (!action) return std::unexpected(action.error());
  action->bind(1, report.provider_message_id).bind(2, report.tracker);
  return read_all(*action, 2);
}

}  // namespace

Result<void> read_ahead(Database& db, std::span<const InboundMessage> messages, std::span<const DeliveryReport> reports,
                        std::size_t history) {
  for (const auto& m : messages) DISPATCHD_TRY(read_message_ahead(db, m, history));
  for (const auto& r : reports) DISPATCHD_TRY(read_report(db, r));
  return {};
}

}  // namespace dispatchd::store
