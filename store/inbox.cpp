#include "store/inbox.h"

#include <ctime>

#include <sqlite3.h>

#include "store/audit.h"
#include "store/sql.h"

namespace dispatchd::store {
namespace {

std::string error_of(Database& db) { return sqlite3_errmsg(db.handle()); }

}  // namespace

std::string format_time(Time t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::expected<InsertResult, std::string> insert_inbound(Database& db, const InboundMessage& m, Time now) {
  return transaction<InsertResult>(db, [&]() -> std::expected<InsertResult, std::string> {
    Statement insert;
    sqlite3_prepare_v2(db.handle(),
                       "INSERT INTO inbox(channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload)"
                       " VALUES (?,?,?,?,?,?,?) ON CONFLICT (channel, provider_message_id) DO NOTHING",
                       -1, &insert.stmt, nullptr);
    const std::string at = format_time(now);
    bind(insert.stmt, 1, m.channel);
    bind(insert.stmt, 2, m.provider_message_id);
    bind(insert.stmt, 3, m.conversation_id);
    bind(insert.stmt, 4, m.sender);
    bind(insert.stmt, 5, at);
    bind(insert.stmt, 6, m.text);
    bind(insert.stmt, 7, m.raw_payload);
    if (sqlite3_step(insert.stmt) != SQLITE_DONE) return std::unexpected(error_of(db));
    if (sqlite3_changes(db.handle()) == 0) {
      Statement existing;
      sqlite3_prepare_v2(db.handle(), "SELECT id FROM inbox WHERE channel = ? AND provider_message_id = ?", -1,
                         &existing.stmt, nullptr);
      bind(existing.stmt, 1, m.channel);
      bind(existing.stmt, 2, m.provider_message_id);
      if (sqlite3_step(existing.stmt) != SQLITE_ROW) return std::unexpected(error_of(db));
      return InsertResult{sqlite3_column_int64(existing.stmt, 0), true};
    }
    const std::int64_t id = sqlite3_last_insert_rowid(db.handle());
    auto audited = append_audit(db, {at, "received", id, "dispatchd",
                                     "{\"channel\":\"" + m.channel + "\",\"bytes\":" + std::to_string(m.text.size()) + "}"});
    if (!audited) return std::unexpected(audited.error());
    return InsertResult{id, false};
  });
}

std::expected<std::optional<Leased>, std::string> take_next(Database& db, const std::string& worker, Time now,
                                                            std::chrono::seconds lease) {
  return transaction<std::optional<Leased>>(db, [&]() -> std::expected<std::optional<Leased>, std::string> {
    // Ready: received, or processing with an expired lease; and no earlier message of the
    // same conversation still unfinished (ordering per conversation).
    Statement pick;
    sqlite3_prepare_v2(db.handle(),
                       "SELECT m.id, m.conversation_id, m.sender, m.text FROM inbox m"
                       " WHERE (m.state = 'received' OR (m.state = 'processing' AND m.lease_expires_at <= ?1))"
                       "   AND NOT EXISTS (SELECT 1 FROM inbox e WHERE e.conversation_id = m.conversation_id"
                       "                   AND e.id < m.id AND e.state <> 'done')"
                       " ORDER BY m.id LIMIT 1",
                       -1, &pick.stmt, nullptr);
    bind(pick.stmt, 1, format_time(now));
    const int rc = sqlite3_step(pick.stmt);
    if (rc == SQLITE_DONE) return std::optional<Leased>();
    if (rc != SQLITE_ROW) return std::unexpected(error_of(db));
    Leased taken{sqlite3_column_int64(pick.stmt, 0), column_text(pick.stmt, 1), column_text(pick.stmt, 2),
                 column_text(pick.stmt, 3)};
    Statement update;
    sqlite3_prepare_v2(db.handle(),
                       "UPDATE inbox SET state = 'processing', lease_owner = ?, lease_expires_at = ? WHERE id = ?", -1,
                       &update.stmt, nullptr);
    bind(update.stmt, 1, worker);
    bind(update.stmt, 2, format_time(now + lease));
    sqlite3_bind_int64(update.stmt, 3, taken.id);
    if (sqlite3_step(update.stmt) != SQLITE_DONE) return std::unexpected(error_of(db));
    return std::optional<Leased>(std::move(taken));
  });
}

std::expected<void, std::string> finish(Database& db, std::int64_t id, const std::string& outcome, Time now) {
  return transaction<void>(db, [&]() -> std::expected<void, std::string> {
    Statement update;
    sqlite3_prepare_v2(db.handle(),
                       "UPDATE inbox SET state = 'done', outcome = ?, lease_owner = NULL, lease_expires_at = NULL"
                       " WHERE id = ? AND state IN ('processing', 'decided')",
                       -1, &update.stmt, nullptr);
    bind(update.stmt, 1, outcome);
    sqlite3_bind_int64(update.stmt, 2, id);
    if (sqlite3_step(update.stmt) != SQLITE_DONE) return std::unexpected(error_of(db));
    if (sqlite3_changes(db.handle()) != 1) return std::unexpected("message " + std::to_string(id) + " is not being processed");
    auto audited = append_audit(db, {format_time(now), "done", id, "dispatchd", "{\"outcome\":\"" + outcome + "\"}"});
    if (!audited) return std::unexpected(audited.error());
    return {};
  });
}

}  // namespace dispatchd::store
