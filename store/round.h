#pragma once
// Group commit for a single-threaded event loop.
//
// While a Round is attached to a Database, the first top-level transaction() of a loop
// round opens one outer transaction (BEGIN IMMEDIATE) and posts its commit to the end of
// the round; every store call until then is a savepoint inside it, so a call that fails
// still undoes only its own changes. Pages touched by many calls are written to the WAL
// once per round instead of once per call. While a sync is running (SQLite), the posted
// commit leaves the round open until that sync is answered: a round committed meanwhile
// could only wait for the next sync anyway, and one COMMIT for all of them writes a page
// they share once. Under a steady, paced load that is most of the WAL's writes. With an
// `interval`, the next COMMIT also waits until that long has passed since the last sync
// began: commits come at most 1/interval a second under traffic (each waiter waits at most
// `interval` more), and at once when there was none for that long. Neither wait happens
// while a writer in another process waits for the write lock (store/internal/writer_intent.h).
//
// Durability without stalling the loop: the round's COMMIT writes the WAL without syncing
// it (synchronous=NORMAL while attached) and a syncer thread then fdatasyncs the WAL file;
// one sync covers every commit made before it, so commits that pile up during a sync
// share the next one. A checkpoint thread of its own (`wal-checkpoint`) copies the WAL back
// into the database file through its own connection each time the WAL has grown by 1000 pages, as SQLite
// would, instead of SQLite doing it inside a COMMIT on the loop, and once more when commits
// pause for 50 ms with at least 1000 pages in the WAL, so that the WAL starts over even
// under steady traffic (SQLite restarts it only when a write begins after a checkpoint
// copied all of it).
//
// A step whose effect leaves the process (answering 200 to a webhook, calling the Graph
// API after marking an action `sending`, telling staff a decision is stored) registers
// after_commit(then) and acts inside `then`, which runs on the loop once its round is
// committed AND on disk. Every commit is synced, waited on or not.
//
// A round writes nothing to disk before its COMMIT (cache_spill off while attached), so a
// full disk fails the COMMIT, not a statement in the middle of the round.
// A failed COMMIT rolls the whole round back and calls its waiters with false; the store's
// state machine then redoes those steps (a message is taken and decided again; nothing is
// sent twice, since no send leaves before its `sending` mark is durable). A failed sync
// (EIO) also answers false: the rows may be in the file but were never promised.
//
// On PostgreSQL a round is one plain transaction (BEGIN ... COMMIT): the server syncs its
// own log before COMMIT returns, so there is no WAL to sync or checkpoint here, and the
// waiters are answered on the loop right after the COMMIT.
//
// Thread-safety: the loop's thread only, like the Database; the syncer thread touches only
// its own descriptor of the WAL file and hands results back through `post`.

#include <array>
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/histogram.h"
#include "store/error.h"

namespace dispatchd::store {

class Database;

// Upper bounds of Round::Stats::durable_waits' buckets, in microseconds: a sync takes a
// fraction of a millisecond on a local SSD, milliseconds on network storage.
inline constexpr std::array<std::int64_t, 9> k_durable_wait_bounds_us = {250,    500,    1'000,   2'000,    5'000,
                                                                         10'000, 50'000, 250'000, 1'000'000};

// Upper bounds of Round::Stats::sync_times' buckets, in microseconds: finer at the bottom,
// where a local SSD's fdatasync lands.
inline constexpr std::array<std::int64_t, 11> k_sync_bounds_us = {50,    100,    250,    500,     1'000,    2'000,
                                                                  5'000, 10'000, 50'000, 250'000, 1'000'000};

class Round {
 public:
  // `post` runs a function later on the loop's thread, after what is already queued; it
  // must be callable from any thread (boost::asio::post is). Attaches itself to `db`.
  using Post = std::function<void(std::function<void()>)>;
  Round(Database& db, Post post, std::chrono::microseconds interval = {});
  // Commits what is open, waits for the last sync, answers the remaining waiters, detaches
  // and puts the connection back to synchronous=FULL.
  ~Round();
  Round(const Round&) = delete;
  Round& operator=(const Round&) = delete;

  // The connection settings the round applies at start that failed ("PRAGMA ...: reason"):
  // it works without them (every COMMIT then syncs by itself, or a round's pages may spill
  // before its COMMIT); the owner logs them.
  const std::vector<std::string>& setting_failures() const;

  // Opens the round's transaction when none is open (store/transaction.h calls it).
  [[nodiscard]] Result<void> open();
  // Runs `then(durable)` on the loop once what the caller wrote is committed and synced
  // (or failed to be). With no round open, one is opened: `then` never runs before the
  // caller returns.
  void after_commit(std::function<void(bool durable)> then);
  // Runs `then()` on the loop inside the open round, right before its COMMIT, however it
  // commits (posted, deferred, commit(), the destructor): what `then` writes joins the
  // round, and its own after_commit waiters are answered by the same sync. For a step that
  // follows what a round holds (the outbox's `sending` marks after a decision): one COMMIT
  // and one sync carry both, even when the round commits at the end of the loop round that
  // opened it. Functions registered by `then` run too, before the same COMMIT. With no
  // round open, one is opened; should that fail, `then` is posted to run on its own.
  void before_commit(std::function<void()> then);
  // Commits the open round now and asks for its sync (the posted commit then finds
  // nothing to do).
  void commit();

  struct Stats {
    std::int64_t commits = 0;
    std::int64_t failed_commits = 0;
    std::int64_t syncs = 0;  // fdatasync calls: fewer than commits under load
    std::int64_t failed_syncs = 0;
    // Rounds committed at once, not kept open, because another process's writer waited.
    std::int64_t commits_for_writers = 0;
    std::int64_t checkpoints = 0;
    // Checkpoints SQLite refused (a full disk, an I/O error, another process's checkpoint
    // running), and the last one's reason. A failed checkpoint loses nothing, it only leaves
    // the WAL growing, so it is counted rather than reported as a failed round.
    std::int64_t failed_checkpoints = 0;
    std::string last_checkpoint_error;
    // Pages in the WAL after the last commit: it falls when the WAL starts over.
    std::int64_t wal_pages = 0;
    // How long each after_commit waiter waited, from after_commit to its answer (its round's
    // COMMIT and sync, and the way back to the loop): what a webhook's 200, a send and a
    // staff answer wait for the disk. Failed rounds' waiters count too.
    common::Histogram<k_durable_wait_bounds_us> durable_waits;
    // How long each fdatasync of the WAL took, failed ones included (SQLite; none on
    // PostgreSQL): the disk's own part of durable_waits, the rest being the commit interval,
    // the wait for a running sync and the loop's queue.
    common::Histogram<k_sync_bounds_us> sync_times;
  };
  Stats stats() const;

  // Called on the loop's thread for every failed COMMIT or WAL sync, with what failed and
  // SQLite's or the system's reason ("COMMIT: database or disk is full"), and once with
  // ok=true when a round that changed rows commits again after failures (one that changed
  // nothing commits even on a full disk). The store does not log: the caller decides how
  // loudly (a full disk fails every round).
  using Watcher = std::function<void(bool ok, const std::string& why)>;
  void watch(Watcher watcher);

  struct State;  // shared with the syncer thread and posted handlers

 private:
  std::shared_ptr<State> m_state;
};

// Runs `then(durable)` after what the caller just wrote is committed and on disk: through
// the Round attached to `db`, else at once (every transaction has committed by itself,
// synchronously with the default synchronous=FULL).
void after_commit(Database& db, std::function<void(bool durable)> then);

// Round::before_commit through the Round attached to `db`: true when `then` was registered,
// false when no round is attached (every transaction has committed by itself: there is no
// COMMIT to join, and the caller runs `then` as it sees fit).
bool before_commit(Database& db, std::function<void()> then);

}  // namespace dispatchd::store
