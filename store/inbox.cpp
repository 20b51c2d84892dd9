#include "store/inbox.h"

#include <ctime>

#include "common/json_out.h"
#include "store/audit.h"
#include "store/internal/locks.h"
#include "store/internal/sql.h"
#include "store/internal/turn_rows.h"
#include "store/media.h"
#include "store/raw_payload.h"
#include "store/transaction.h"

namespace dispatchd::store {
std::string format_time(Time t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::optional<Time> parse_time(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SSZ
  if (text.size() != 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' || text[16] != ':' ||
      text[19] != 'Z') {
    return std::nullopt;
  }
  const auto number = [&](std::size_t at, std::size_t length) -> std::optional<int> {
    int value = 0;
    for (std::size_t i = at; i < at + length; ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      value = value * 10 + (text[i] - '0');
    }
    return value;
  };
  const auto y = number(0, 4), mo = number(5, 2), d = number(8, 2), h = number(11, 2), mi = number(14, 2),
             se = number(17, 2);
  if (!y || !mo || !d || !h || !mi || !se || *h > 23 || *mi > 59 || *se > 59) return std::nullopt;
  const std::chrono::year_month_day day{std::chrono::year{*y}, std::chrono::month{static_cast<unsigned>(*mo)},
                                        std::chrono::day{static_cast<unsigned>(*d)}};
  if (!day.ok()) return std::nullopt;
  return std::chrono::sys_days{day} + std::chrono::hours{*h} + std::chrono::minutes{*mi} + std::chrono::seconds{*se};
}

Result<InsertResult> insert_inbound(Database& db, const InboundMessage& m, Instant now) {
  return transaction<InsertResult>(db, [&]() -> Result<InsertResult> {
    // Several instances on PostgreSQL: the audit tail, which this insert's event needs
    // anyway, is taken before the id, so that ids follow commit order (take_next's order
    // within a conversation); SQLite's one writer does that already.
    DISPATCHD_TRY(internal::lock_audit_tail(db));
    auto insert = Query::prepare(
        db,
        "INSERT INTO inbox(channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload,"
        " message_type, raw_encoding, arrived_ms) VALUES (?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT (channel, provider_message_id) DO NOTHING"
        " RETURNING id");
    if (!insert) return std::unexpected(insert.error());
    const std::string at = format_time(std::chrono::floor<std::chrono::seconds>(now));
    const auto raw = store_payload(m.raw_payload);
    insert->bind(1, m.channel).bind(2, m.provider_message_id).bind(3, m.conversation_id).bind(4, m.sender);
    insert->bind(5, at).bind(6, m.text).bind(7, raw.text);
    insert->bind(8, m.type.empty() ? std::nullopt : std::optional<std::string>(m.type)).bind(9, raw.encoding);
    insert->bind(10, static_cast<std::int64_t>(now.time_since_epoch().count()));
    auto inserted = insert->insert_returning_id();
    if (!inserted) return std::unexpected(inserted.error());
    if (!*inserted) {
      auto existing = Query::prepare(db, "SELECT id FROM inbox WHERE channel = ? AND provider_message_id = ?");
      if (!existing) return std::unexpected(existing.error());
      existing->bind(1, m.channel).bind(2, m.provider_message_id);
      auto row = existing->step();
      if (!row || !*row)
        return std::unexpected(Error::internal("the duplicate of " + m.provider_message_id + " vanished"));
      return InsertResult{existing->integer(0), true};
    }
    const std::int64_t id = **inserted;
    JsonOut detail;
    detail.begin_object().field("channel", m.channel).field("provider_message_id", m.provider_message_id);
    if (!m.type.empty()) detail.field("type", m.type);
    detail.field("bytes", m.text.size()).end_object();
    DISPATCHD_TRY(append_audit(db, {at, AuditKind::received, id, "dispatchd", detail.str()}));
    if (!m.media.empty()) DISPATCHD_TRY(insert_media(db, id, m.media, whole_seconds(now)));
    return InsertResult{id, false};
  });
}

Result<void> release_leases(Database& db, const std::string& worker) {
  DISPATCHD_TRY(release_media_leases(db, worker));
  // Last: the connection's count of changed rows is the inbox's (store/instances.cpp reports it).
  auto update = Query::prepare(
      db, "UPDATE inbox SET lease_expires_at = received_at WHERE state = 'processing' AND lease_owner = ?");
  if (!update) return std::unexpected(update.error());
  update->bind(1, worker);
  return update->run();
}

Result<void> release_lease(Database& db, std::int64_t id, const std::string& worker) {
  static const auto k_release = internal::turn_change("UPDATE inbox SET lease_expires_at = received_at WHERE ",
                                                      " AND state = 'processing' AND lease_owner = ?2");
  auto changed = internal::change_turn(db, k_release, id, [&](Query& q) { q.bind(2, worker); });
  if (!changed) return std::unexpected(changed.error());
  return {};
}

Result<std::vector<std::string>> not_stored(Database& db, const std::string& channel,
                                            const std::vector<std::string>& provider_ids) {
  std::vector<std::string> out;
  for (const auto& id : provider_ids) {
    auto seen = Query::prepare(db, "SELECT 1 FROM inbox WHERE channel = ? AND provider_message_id = ?");
    if (!seen) return std::unexpected(seen.error());
    seen->bind(1, channel).bind(2, id);
    auto row = seen->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) out.push_back(id);
  }
  return out;
}

Result<StoredInbound> stored_inbound(Database& db, std::int64_t message_id) {
  auto read = Query::prepare(db,
                             "SELECT channel, provider_message_id, conversation_id, coalesce(raw_payload, ''),"
                             " raw_encoding FROM inbox WHERE id = ?");
  if (!read) return std::unexpected(read.error());
  read->bind(1, message_id);
  auto row = read->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::unexpected(Error::not_found("no inbound message " + std::to_string(message_id)));
  auto bytes = payload_bytes(read->text(3), read->optional_text(4));
  if (!bytes)
    return std::unexpected(Error{ErrorKind::corrupt, "the raw payload of message " + std::to_string(message_id) +
                                                         " is not in its raw_encoding"});
  return StoredInbound{read->text(0), read->text(1), read->text(2), std::move(*bytes)};
}

Result<std::optional<Time>> last_inbound_at(Database& db, const std::string& channel, const std::string& sender) {
  auto query = Query::prepare(db, "SELECT max(received_at) FROM inbox WHERE channel = ? AND sender = ?");
  if (!query) return std::unexpected(query.error());
  query->bind(1, channel).bind(2, sender);
  auto row = query->step();
  if (!row) return std::unexpected(row.error());
  const auto text = query->optional_text(0);
  if (!text) return std::optional<Time>();
  return parse_time(*text);
}

Result<bool> hold_lease(Database& db, const Leased& taken, const std::string& worker) {
  auto held = Query::prepare(db, per_backend(db.backend(), [](Backend b) {
                               return std::string(
                                          "SELECT 1 FROM inbox WHERE id = ?1 AND state = 'processing'"
                                          " AND lease_owner = ?2 AND lease_expires_at = ?3") +
                                      (b == Backend::postgresql ? " FOR NO KEY UPDATE" : "");
                             }));
  if (!held) return std::unexpected(held.error());
  held->bind(1, taken.id).bind(2, worker).bind(3, taken.lease_token);
  return held->step();
}

Result<void> postpone(Database& db, std::int64_t id, Time until) {
  static const auto k_postpone = internal::turn_change(
      "UPDATE inbox SET lease_owner = NULL, lease_expires_at = ?2 WHERE ", " AND state = 'processing'");
  const std::string at = format_time(until);
  auto changed = internal::change_turn(db, k_postpone, id, [&](Query& q) { q.bind(2, at); });
  if (!changed) return std::unexpected(changed.error());
  if (changed->empty())
    return std::unexpected(Error::refused("message " + std::to_string(id) + " is not being processed"));
  return {};
}

Result<std::int64_t> release_postponed(Database& db, const std::vector<std::int64_t>& ids) {
  static const auto k_release = internal::turn_change("UPDATE inbox SET lease_expires_at = received_at WHERE ",
                                                      " AND state = 'processing' AND lease_owner IS NULL");
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    std::int64_t released = 0;
    for (const auto id : ids) {
      auto changed = internal::change_turn(db, k_release, id, [](Query&) {});
      if (!changed) return std::unexpected(changed.error());
      if (!changed->empty()) ++released;
    }
    return released;
  });
}

Result<std::vector<HistoryEntry>> history(Database& db, std::int64_t message_id, std::size_t limit) {
  // Replies on their way count: a message that arrives after the decision on the ones before
  // it is decided while that reply is queued or being sent.
  // The conversation's newest `limit` messages before this one (a backward walk of
  // inbox_conversation, so it reads `limit` rows however long the conversation is) and the
  // replies sent to them (through actions_message); of those, the newest `limit` entries,
  // returned oldest first. On a year of history, reading every earlier message and reply of
  // a long-time customer for each message cost hundreds of random page reads on the loop.
  auto query = Query::prepare(
      db,
      "WITH recent AS ("
      "  SELECT id, received_at, text FROM inbox"
      "  WHERE conversation_id = (SELECT conversation_id FROM inbox WHERE id = ?1) AND id < ?1"
      "  ORDER BY id DESC LIMIT ?2)"
      "SELECT at, who, text FROM ("
      "  SELECT r.received_at AS at, r.id AS seq, 0 AS who, r.text FROM recent r"
      "  UNION ALL"
      "  SELECT a.updated_at, a.message_id, 1, a.body FROM recent r JOIN actions a ON a.message_id = r.id"
      // `|| ''` keeps SQLite's planner off actions_status: with `status = 'sent'` it walked
      // every sent action of the whole history and matched each against `recent`.
      "  WHERE a.status || '' IN ('approved', 'sending', 'sent')"
      "  ORDER BY at DESC, seq DESC, who DESC LIMIT ?2"
      ") AS h ORDER BY at, who, seq");
  if (!query) return std::unexpected(query.error());
  query->bind(1, message_id).bind(2, static_cast<std::int64_t>(limit));
  std::vector<HistoryEntry> out;
  while (true) {
    auto row = query->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    out.push_back({query->text(0), query->integer(1) == 1, query->text(2)});
  }
}

Result<void> decide(Database& db, std::int64_t id, Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    DISPATCHD_TRY(internal::lock_audit_tail(db));  // before the row (store/internal/locks.h)
    static const auto k_decide =
        internal::turn_change("UPDATE inbox SET state = 'decided', lease_owner = NULL, lease_expires_at = NULL WHERE ",
                              " AND state = 'processing'");
    auto changed = internal::change_turn(db, k_decide, id, [](Query&) {});
    if (!changed) return std::unexpected(changed.error());
    if (changed->empty() || changed->front() != id)
      return std::unexpected(Error::refused("message " + std::to_string(id) + " is not being processed"));
    for (const auto message : *changed)
      DISPATCHD_TRY(append_audit(db, {format_time(now), AuditKind::decided, message, "dispatchd", "{}"}));
    return {};
  });
}

Result<void> finish(Database& db, std::int64_t id, Outcome outcome, Time now, const std::string& why) {
  if (outcome == Outcome::pending) return std::unexpected(Error::internal("a message is finished with an outcome"));
  return transaction<void>(db, [&]() -> Result<void> {
    DISPATCHD_TRY(internal::lock_audit_tail(db));  // before the row (store/internal/locks.h)
    static const auto k_finish = internal::turn_change(
        "UPDATE inbox SET state = 'done', outcome = ?2, lease_owner = NULL, lease_expires_at = NULL WHERE ",
        " AND state IN ('processing', 'decided')");
    auto changed = internal::change_turn(db, k_finish, id, [&](Query& q) { q.bind(2, outcome); });
    if (!changed) return std::unexpected(changed.error());
    if (changed->empty() || changed->front() != id)
      return std::unexpected(Error::refused("message " + std::to_string(id) + " is not being processed"));
    JsonOut detail;
    detail.begin_object().field("outcome", to_sql(outcome));
    if (!why.empty()) detail.field("why", why);
    detail.end_object();
    for (const auto message : *changed)
      DISPATCHD_TRY(append_audit(db, {format_time(now), AuditKind::done, message, "dispatchd", detail.str()}));
    return {};
  });
}

}  // namespace dispatchd::store
