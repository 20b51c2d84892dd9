#include "store/instances.h"

#include <algorithm>
#include <bit>

#include "store/internal/locks.h"
#include "store/internal/sql.h"
#include "store/migrations.h"
#include "store/outbox.h"

namespace dispatchd::store {

std::int64_t advisory_lock_key(std::string_view scope, std::string_view name) {
  std::string text = "dispatchd/";
  text.append(scope).append("/").append(name);
  const std::string hex = sha256_hex(text);
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 16; ++i) {
    const char c = hex[i];
    value = value << 4 | static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  return std::bit_cast<std::int64_t>(value);
}

namespace internal {

Result<void> lock_until_commit(Database& db, std::int64_t key) {
  if (db.backend() != Backend::postgresql) return {};
  auto lock = Query::prepare(db, "SELECT pg_advisory_xact_lock(?)");
  if (!lock) return std::unexpected(lock.error());
  lock->bind(1, key);
  return lock->run();
}

Result<void> lock_audit_tail(Database& db) {
  static const std::int64_t key = advisory_lock_key("audit", "tail");
  return lock_until_commit(db, key);
}

}  // namespace internal

namespace {

std::string cutoff(Time now, std::chrono::seconds dead_after) { return format_time(now - dead_after); }

// `owner`'s sends in flight and leases (see Recovered), for `taker`: sends of the lookup
// channels pass to `taker`, the others become unknown. Inside the caller's transaction.
Result<void> recover_work(Database& db, const std::string& owner, const std::string& taker, Time now,
                          std::span<const std::string> lookup_channels, Recovered& out) {
  std::vector<std::int64_t> unknown;
  std::vector<std::int64_t> resolve;
  {
    auto sending = Query::prepare(db,
                                  "SELECT a.id, m.channel FROM actions a JOIN inbox m ON m.id = a.message_id"
                                  " WHERE a.status = 'sending' AND a.claimed_by = ? ORDER BY a.id");
    if (!sending) return std::unexpected(sending.error());
    sending->bind(1, owner);
    while (true) {
      auto row = sending->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) break;
      const bool lookup = std::ranges::find(lookup_channels, sending->text(1)) != lookup_channels.end();
      (lookup ? resolve : unknown).push_back(sending->integer(0));
    }
  }
  const std::string why = owner == taker
                              ? "dispatchd stopped between marking the send and recording its result"
                              : "instance " + owner + " died between marking the send and recording its result";
  for (const auto id : unknown) {
    auto escalation = unknown_send(db, id, why, now);
    if (!escalation) return std::unexpected(escalation.error());
  }
  for (const auto id : resolve) {
    if (owner == taker) break;
    auto pass = Query::prepare(db, "UPDATE actions SET claimed_by = ? WHERE id = ? AND status = 'sending'");
    if (!pass) return std::unexpected(pass.error());
    pass->bind(1, taker).bind(2, id);
    DISPATCHD_TRY(pass->run());
  }
  DISPATCHD_TRY(release_leases(db, owner));
  out.released_leases += internal::Access::connection(db).changes();
  out.unknown_actions.insert(out.unknown_actions.end(), unknown.begin(), unknown.end());
  out.to_resolve.insert(out.to_resolve.end(), resolve.begin(), resolve.end());
  return {};
}

}  // namespace

Result<Recovered> start_instance(Database& db, const std::string& self, Time now,
                                 std::span<const std::string> lookup_channels) {
  return transaction<Recovered>(db, [&]() -> Result<Recovered> {
    auto upsert = Query::prepare(db,
                                 "INSERT INTO instances(id, started_at, heartbeat_at) VALUES (?1, ?2, ?2)"
                                 " ON CONFLICT (id) DO UPDATE SET started_at = excluded.started_at,"
                                 " heartbeat_at = excluded.heartbeat_at, taken_over_at = NULL, taken_over_by = NULL");
    if (!upsert) return std::unexpected(upsert.error());
    upsert->bind(1, self).bind(2, format_time(now));
    DISPATCHD_TRY(upsert->run());
    Recovered out;
    DISPATCHD_TRY(recover_work(db, self, self, now, lookup_channels, out));
    return out;
  });
}

Result<bool> heartbeat(Database& db, const std::string& self, Time now) {
  return transaction<bool>(db, [&]() -> Result<bool> {
    const std::string at = format_time(now);
    auto renew = Query::prepare(db, "UPDATE instances SET heartbeat_at = ? WHERE id = ? AND taken_over_at IS NULL");
    if (!renew) return std::unexpected(renew.error());
    renew->bind(1, at).bind(2, self);
    DISPATCHD_TRY(renew->run());
    if (renew->changes() == 1) return true;
    // No row (the first heartbeat), or a row taken over, which stays as it is.
    auto add = Query::prepare(db,
                              "INSERT INTO instances(id, started_at, heartbeat_at) VALUES (?1, ?2, ?2)"
                              " ON CONFLICT (id) DO NOTHING RETURNING 1");
    if (!add) return std::unexpected(add.error());
    add->bind(1, self).bind(2, at);
    auto added = add->insert_returning_id();
    if (!added) return std::unexpected(added.error());
    return added->has_value();
  });
}

Result<std::int64_t> live_instances(Database& db, Time now, std::chrono::seconds dead_after) {
  auto count = Query::prepare(db, "SELECT count(*) FROM instances WHERE heartbeat_at >= ? AND taken_over_at IS NULL");
  if (!count) return std::unexpected(count.error());
  count->bind(1, cutoff(now, dead_after));
  DISPATCHD_TRY(count->step());
  return count->integer(0);
}

Result<std::vector<std::string>> dead_instances(Database& db, Time now, std::chrono::seconds dead_after) {
  auto query =
      Query::prepare(db, "SELECT id FROM instances WHERE heartbeat_at < ? AND taken_over_at IS NULL ORDER BY id");
  if (!query) return std::unexpected(query.error());
  query->bind(1, cutoff(now, dead_after));
  std::vector<std::string> out;
  while (true) {
    auto row = query->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    out.push_back(query->text(0));
  }
}

Result<Takeover> take_over_dead(Database& db, const std::string& self, Time now, std::chrono::seconds dead_after,
                                std::span<const std::string> lookup_channels) {
  return transaction<Takeover>(db, [&]() -> Result<Takeover> {
    // PostgreSQL: the rows another taker holds are skipped (it is taking them over); a row
    // it took and committed meanwhile fails the WHERE when re-read under the lock.
    const std::string& select = per_backend(db.backend(), [](Backend b) {
      return std::string(
                 "SELECT id FROM instances WHERE heartbeat_at < ? AND taken_over_at IS NULL AND id <> ?"
                 " ORDER BY id") +
             (b == Backend::postgresql ? " FOR UPDATE SKIP LOCKED" : "");
    });
    Takeover out;
    {
      auto dead = Query::prepare(db, select);
      if (!dead) return std::unexpected(dead.error());
      dead->bind(1, cutoff(now, dead_after)).bind(2, self);
      while (true) {
        auto row = dead->step();
        if (!row) return std::unexpected(row.error());
        if (!*row) break;
        out.instances.push_back(dead->text(0));
      }
    }
    for (const auto& id : out.instances) {
      auto mark = Query::prepare(db, "UPDATE instances SET taken_over_at = ?, taken_over_by = ? WHERE id = ?");
      if (!mark) return std::unexpected(mark.error());
      mark->bind(1, format_time(now)).bind(2, self).bind(3, id);
      DISPATCHD_TRY(mark->run());
      DISPATCHD_TRY(recover_work(db, id, self, now, lookup_channels, out.work));
    }
    return out;
  });
}

std::int64_t instance_share(std::int64_t limit, std::int64_t live) {
  if (limit <= 0) return 1;
  const std::int64_t n = std::max<std::int64_t>(live, 1);
  return std::max<std::int64_t>((limit + n - 1) / n, 1);
}

Result<bool> try_own_mailbox(Database& db, std::string_view mailbox) {
  if (db.backend() != Backend::postgresql) return true;
  // A session lock taken twice must be released twice: when this session holds it already
  // (pg_locks splits the bigint key into classid, the high half, and objid), it is not
  // taken again, so that release_mailbox gives it up with one call.
  auto own = Query::prepare(
      db,
      "SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
      " AND granted AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = ?1)"
      " THEN true ELSE pg_try_advisory_lock(?1) END");
  if (!own) return std::unexpected(own.error());
  own->bind(1, advisory_lock_key("mailbox", mailbox));
  DISPATCHD_TRY(own->step());
  return own->integer(0) == 1;
}

Result<void> release_mailbox(Database& db, std::string_view mailbox) {
  if (db.backend() != Backend::postgresql) return {};
  auto release = Query::prepare(db, "SELECT pg_advisory_unlock(?)");
  if (!release) return std::unexpected(release.error());
  release->bind(1, advisory_lock_key("mailbox", mailbox));
  return release->run();
}

Result<void> hold_channel(Database& db, const std::string& channel, Time until, const std::string& by, Time now) {
  // ISO 8601 texts of one format order as the times they name.
  auto upsert =
      Query::prepare(db,
                     "INSERT INTO channel_holds (channel, hold_until, held_by, set_at) VALUES (?1, ?2, ?3, ?4)"
                     " ON CONFLICT (channel) DO UPDATE SET hold_until = excluded.hold_until,"
                     " held_by = excluded.held_by, set_at = excluded.set_at"
                     " WHERE excluded.hold_until > channel_holds.hold_until");
  if (!upsert) return std::unexpected(upsert.error());
  upsert->bind(1, channel).bind(2, format_time(until)).bind(3, by).bind(4, format_time(now));
  return upsert->run();
}

Result<std::vector<ChannelHold>> channel_holds(Database& db, Time now) {
  auto select = Query::prepare(
      db, "SELECT channel, hold_until, held_by FROM channel_holds WHERE hold_until > ? ORDER BY channel");
  if (!select) return std::unexpected(select.error());
  select->bind(1, format_time(now));
  std::vector<ChannelHold> holds;
  while (true) {
    auto row = select->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    const auto until = parse_time(select->text(1));
    if (!until)
      return std::unexpected(Error{ErrorKind::corrupt, "channel_holds.hold_until is not a time: " + select->text(1)});
    holds.push_back({select->text(0), *until, select->text(2)});
  }
  return holds;
}

}  // namespace dispatchd::store
