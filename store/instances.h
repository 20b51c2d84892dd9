#pragma once
// Several dispatchd instances on one database (docs/architecture.md).
//
// Each instance has an id (instance.id) and a row in `instances` (migration 0014) whose
// heartbeat it renews every few seconds. An instance whose heartbeat is older than
// `dead_after` (cluster.dead_after_s) is dead, and any live instance takes its work over
// (take_over_dead): its sends in flight (actions in 'sending' it claimed, store/outbox.h
// begin_send) become 'unknown' with a delivery_unknown escalation, as they do at start on
// one machine, and its inbox leases are released so that the others take those messages
// at once instead of when the leases expire. A restarted instance does the same to its own
// work at start (start_instance). The instance id is the lease owner (take_next's worker)
// and the claimer of sends (begin_send's instance).
//
// Concurrency: every function here is safe while other instances call it and the rest of
// the store. A dead instance is taken over by exactly one taker: the takeover marks its row
// (taken_over_at) in the transaction that moves its work, and two takers at once either
// skip the row the other holds (PostgreSQL: FOR UPDATE SKIP LOCKED) or run one after the
// other (SQLite's one writer) and find it taken. An instance that was only paused, not
// dead, learns at its next heartbeat that its work was taken (heartbeat returns false): it
// must drop what it holds in memory and call start_instance again.
//
// Gmail mailboxes: each is polled by the one instance whose session holds the mailbox's
// PostgreSQL advisory lock (try_own_mailbox). The lock belongs to the connection: it ends
// when the connection closes or breaks, and another instance's next try wins it.
//
// On SQLite (one machine) the table holds the one instance, nothing is ever dead, and a
// mailbox is always owned.

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"

namespace dispatchd::store {

// cluster.dead_after_s's default.
inline constexpr std::chrono::seconds k_default_dead_after{30};

// A PostgreSQL advisory lock key (a bigint) for `name` in `scope` ("mailbox", ...): the
// first 8 bytes of sha256("dispatchd/" + scope + "/" + name), big-endian, as a signed
// 64-bit integer. Computed here, not by the server's hashtext(), whose values PostgreSQL
// does not promise to keep across major versions: every dispatchd version, old or new,
// derives the same key for the same mailbox, so a rolling upgrade cannot let two instances
// own one mailbox. The prefix keeps our keys apart from other programs' on the database.
std::int64_t advisory_lock_key(std::string_view scope, std::string_view name);

// What a start or a takeover did with an instance's work.
struct Recovered {
  std::vector<std::int64_t> unknown_actions;  // sends made 'unknown', each with its delivery_unknown escalation
  // Sends of the lookup channels (Gmail finds out whether a send arrived by our Message-ID):
  // left in 'sending', now claimed by the caller, who resolves them as at start
  // (Channel::resolve_unknown).
  std::vector<std::int64_t> to_resolve;
  std::int64_t released_leases = 0;  // inbox messages in processing made available at once
};

// At an instance's start: registers `self` (started and alive at `now`; a row left by an
// earlier run is reset, also when it was taken over) and recovers what its previous run
// left: its own sends in 'sending' and its own leases, as Recovered says. One transaction.
[[nodiscard]] Result<Recovered> start_instance(Database& db, const std::string& self, Time now,
                                               std::span<const std::string> lookup_channels = {});

// Renews `self`'s heartbeat (registering it on the first call). False when `self` was
// taken over since: the heartbeat is not renewed, and the instance must call start_instance.
[[nodiscard]] Result<bool> heartbeat(Database& db, const std::string& self, Time now);

// Instances alive at `now`: a heartbeat at most `dead_after` old, and not taken over. For
// the per-instance share of a deployment's rate limits (instance_share).
[[nodiscard]] Result<std::int64_t> live_instances(Database& db, Time now, std::chrono::seconds dead_after);

// Instances dead at `now` (heartbeat older than `dead_after`) whose work no one has taken
// over yet, by id.
[[nodiscard]] Result<std::vector<std::string>> dead_instances(Database& db, Time now, std::chrono::seconds dead_after);

struct Takeover {
  std::vector<std::string> instances;  // the dead instances this call took over, by id
  Recovered work;                      // what it did with their work
};

// Takes over the work of every dead instance but `self` (see the top of this file), in one
// transaction. Run by any live instance, e.g. after each heartbeat; another instance
// running it at the same time takes over each dead instance at most once between them.
[[nodiscard]] Result<Takeover> take_over_dead(Database& db, const std::string& self, Time now,
                                              std::chrono::seconds dead_after,
                                              std::span<const std::string> lookup_channels = {});

// One instance's share of a deployment-wide limit (llm.max_concurrency, a provider's
// pacing) among `live` instances: the limit divided up, rounded up, at least 1. Rounding up
// lets the deployment exceed the limit by fewer than `live` while instances come and go;
// rounding down could starve each instance to 0.
std::int64_t instance_share(std::int64_t limit, std::int64_t live);

// A provider's pacing shared by the deployment (migration 0017): `by` got a RetryAfter from
// `channel`'s provider and nothing of that channel may be sent before `until`. Kept when
// a later hold is already stored (the longer wait wins, whoever asked).
[[nodiscard]] Result<void> hold_channel(Database& db, const std::string& channel, Time until, const std::string& by,
                                        Time now);

struct ChannelHold {
  std::string channel;
  Time until;
  std::string held_by;
};
// The holds that last past `now`, by channel.
[[nodiscard]] Result<std::vector<ChannelHold>> channel_holds(Database& db, Time now);

// Tries to become the poller of Gmail mailbox `mailbox`: true when this connection holds
// the mailbox's advisory lock (pg_try_advisory_lock on advisory_lock_key("mailbox", ...)),
// now or from an earlier call (a repeated call does not stack the lock); false when
// another session holds it. SQLite: always true. The lock ends with the connection or
// with release_mailbox.
[[nodiscard]] Result<bool> try_own_mailbox(Database& db, std::string_view mailbox);

// Gives up the mailbox's lock held by this connection (nothing when it holds none).
[[nodiscard]] Result<void> release_mailbox(Database& db, std::string_view mailbox);

}  // namespace dispatchd::store
