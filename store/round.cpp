#include "store/round.h"

#include "common/handler_timing.h"
#include "common/thread_name.h"

#include <fcntl.h>
#include <unistd.h>

#include <sqlite3.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "store/database.h"
#include "store/internal/access.h"
#include "store/internal/writer_intent.h"
#include "store/transaction.h"

namespace dispatchd::store {
namespace {

// SQLite's automatic checkpoint threshold, kept: the WAL holds 1000 pages (4 MiB).
constexpr int k_checkpoint_frames = 1000;
// After this long without a commit to sync, the syncer has the WAL's last pages copied (see
// State::idle_checkpoint_due), once the WAL holds as many pages as a checkpoint waits for:
// a smaller WAL is not worth starting over, and while it only grows a full disk fails the
// next commit at once (starting over reuses the file's space, so commits then go on until
// that is used up).
constexpr auto k_idle_before_checkpoint = std::chrono::milliseconds(50);
constexpr int k_idle_checkpoint_frames = k_checkpoint_frames;
// Under traffic that never pauses the loop itself starts the WAL over (State::restart_wal)
// once it holds this many pages (16 MiB) and the checkpoint thread has left at most
// k_restart_lag of them to copy: the copy on the loop is then short.
constexpr int k_restart_frames = 4 * k_checkpoint_frames;
constexpr int k_restart_lag = 512;

// A descriptor of our own for the database's WAL file (-1 when it does not exist yet):
// fdatasync on it syncs the same file SQLite writes.
int open_wal(const Database& db) { return ::open((db.path() + "-wal").c_str(), O_RDONLY | O_CLOEXEC); }

}  // namespace

struct Round::State : std::enable_shared_from_this<State> {
  Database& db;
  Post post;
  // SQLite: the WAL, synced by the syncer thread and checkpointed by its own. PostgreSQL's
  // COMMIT returns once the server has it on disk (synchronous_commit), so a round there
  // is a plain transaction and its waiters are answered after the COMMIT.
  const bool wal;
  bool open = false;
  // A step waiting for the round that holds its writes, since when (Stats::durable_waits).
  struct Waiter {
    std::chrono::steady_clock::time_point since;
    std::function<void(bool)> then;
  };
  std::vector<Waiter> waiters;                // of the open round
  std::vector<std::function<void()>> before;  // run right before its COMMIT
  // Committed rounds waiting for their sync, oldest first: (generation, waiters).
  std::deque<std::pair<std::int64_t, std::vector<Waiter>>> unsynced;
  std::int64_t committed = 0;  // generation of the last commit
  // No sync is running or cooling down (see commit_when_due): a COMMIT now is synced at once.
  bool syncer_ready = true;
  // The open round's posted commit found the syncer busy and left the round open: it
  // commits when the syncer is ready again (on_ready).
  bool deferred = false;
  // The shortest time from one sync's start to the next one's (Round's constructor).
  const std::chrono::microseconds interval;
  // Writers in other processes waiting for the write lock (store/internal/writer_intent.h):
  // while one waits a round is not kept open. Null on PostgreSQL.
  const internal::WriterIntent* writers;
  Stats stats;
  Watcher watcher;
  bool failing = false;  // the last COMMIT or sync failed
  // Settings the round can do without (each call says why) that failed, for the owner to
  // log (Round::setting_failures).
  std::vector<std::string> setting_failures;

  void try_setting(const char* sql) {
    if (auto ok = internal::exec(db, sql); !ok)
      setting_failures.push_back(std::string(sql) + ": " + ok.error().message);
  }
  // Rows changed on the connection when the round began: a round that changed no row commits even
  // on a full disk, and says nothing about whether rounds are stored again.
  std::int64_t changes_at_open = 0;

  // Shared with the syncer thread, under `mutex`.
  std::mutex mutex;
  std::condition_variable wake;
  std::int64_t requested = 0;  // sync everything up to this generation
  bool stopping = false;
  std::int64_t syncs = 0;
  std::int64_t failed_syncs = 0;
  common::Histogram<k_sync_bounds_us> sync_times;
  std::int64_t checkpoints = 0;
  std::int64_t failed_checkpoints = 0;
  std::string last_checkpoint_error;
  bool checkpoint_wanted = false;
  std::condition_variable checkpoint_wake;
  std::thread syncer;
  // A connection of its own for checkpoints, on a thread of its own, so that copying the
  // WAL back into the database (and its two syncs) neither holds the loop nor delays the
  // syncs commits wait for; empty when it cannot open, and then SQLite's automatic
  // checkpoint stays on the loop's connection.
  std::optional<Database> checkpointer;
  std::thread checkpoint_thread;
  // Pages in the WAL after the last commit (SQLite's WAL hook tells), and at the last
  // checkpoint the syncer ran. The WAL file keeps its size when SQLite starts it over, so
  // its size says nothing; the page count does.
  std::atomic<int> wal_frames{0};
  int frames_at_checkpoint = 0;
  // The pages the last checkpoint copied (written by the checkpoint thread), and the WAL's
  // pages when the syncer last asked for a checkpoint at a pause (syncer only).
  std::atomic<int> frames_copied{0};
  // Held by whichever of the checkpoint thread and the loop (restart_wal) copies the WAL: the
  // loop never waits for it, and the thread's checkpoint is never refused for the loop's
  // (SQLite would answer SQLITE_BUSY, counted as a failed checkpoint).
  std::mutex copying;
  int frames_at_idle_checkpoint = 0;

  State(Database& db_, Post post_, std::chrono::microseconds interval_)
      : db(db_),
        post(std::move(post_)),
        wal(db_.backend() == Backend::sqlite),
        interval(interval_),
        writers(internal::Access::writers(db_)) {}

  void request_sync(std::int64_t generation) {
    {
      const std::lock_guard lock(mutex);
      requested = generation;
    }
    wake.notify_one();
  }

  // The syncer thread: one fdatasync covers every commit made before it started.
  void run_syncer() {
    int fd = -1;
    std::int64_t synced = 0;
    while (true) {
      std::int64_t target = 0;
      {
        std::unique_lock lock(mutex);
        const auto work = [&] { return stopping || requested > synced; };
        if (idle_checkpoint_due()) {
          if (!wake.wait_for(lock, k_idle_before_checkpoint, work)) {
            frames_at_idle_checkpoint = wal_frames.load(std::memory_order_relaxed);
            want_checkpoint(lock);
            continue;
          }
        } else {
          wake.wait(lock, work);
        }
        if (requested <= synced) break;  // stopping, nothing left
        target = requested;
      }
      const auto started = std::chrono::steady_clock::now();
      // The WAL exists once the first commit wrote it, and stays while our connection is
      // open; a descriptor of our own syncs the same file.
      if (fd < 0) fd = open_wal(db);
      std::string why;
      std::optional<std::chrono::steady_clock::duration> took;
      if (fd < 0) {
        why = std::string("cannot open the WAL file: ") + std::strerror(errno);
      } else {
        const auto sync_start = std::chrono::steady_clock::now();
        if (::fdatasync(fd) != 0) why = std::string("fdatasync of the WAL file: ") + std::strerror(errno);
        took = std::chrono::steady_clock::now() - sync_start;
      }
      const bool ok = why.empty();
      {
        const std::lock_guard lock(mutex);
        ++syncs;
        if (!ok) ++failed_syncs;
        if (took) sync_times.add(std::chrono::duration_cast<std::chrono::microseconds>(*took).count());
      }
      synced = target;
      // The waiters first: a checkpoint takes milliseconds they need not wait for.
      const auto ready_at = started + interval;
      const bool ready = std::chrono::steady_clock::now() >= ready_at;
      post(common::named_step([weak = weak_from_this(), target, why = std::move(why), ready] {
        auto self = weak.lock();
        if (!self) return;
        self->on_synced(target, why);
        if (ready) self->on_ready(target);
      }));
      if (ok && checkpointer && checkpoint_due()) {
        std::unique_lock lock(mutex);
        want_checkpoint(lock);
      }
      if (!ready) {
        {
          std::unique_lock lock(mutex);
          wake.wait_until(lock, ready_at, [&] { return stopping; });
        }
        post(common::named_step([weak = weak_from_this(), target] {
          if (auto self = weak.lock()) self->on_ready(target);
        }));
      }
    }
    if (fd >= 0) ::close(fd);
  }

  void want_checkpoint(std::unique_lock<std::mutex>&) {
    checkpoint_wanted = true;
    checkpoint_wake.notify_one();
  }

  // The checkpoint thread: one checkpoint for any number of requests made while one ran.
  void run_checkpoints() {
    while (true) {
      {
        std::unique_lock lock(mutex);
        checkpoint_wake.wait(lock, [&] { return stopping || checkpoint_wanted; });
        if (!checkpoint_wanted) break;  // stopping
        checkpoint_wanted = false;
      }
      checkpoint();
    }
  }

  // PASSIVE: copies what no reader still needs, never blocks the loop's writes.
  void checkpoint() {
    const std::lock_guard hold(copying);
    if (const int rc = copy_back(*checkpointer); rc != SQLITE_OK) {
      std::string why = std::string("checkpoint: ") + sqlite3_errstr(rc);
      const std::lock_guard lock(mutex);
      ++failed_checkpoints;
      last_checkpoint_error = std::move(why);
    }
  }

  // One PASSIVE checkpoint through `connection` (the caller holds `copying`), counted when
  // it succeeds; SQLite's result code.
  int copy_back(Database& connection) {
    int in_wal = 0;
    int copied = 0;
    const int rc = sqlite3_wal_checkpoint_v2(internal::Access::handle(connection), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                             &in_wal, &copied);
    if (rc != SQLITE_OK) return rc;
    frames_copied.store(copied, std::memory_order_relaxed);
    const std::lock_guard lock(mutex);
    ++checkpoints;
    return rc;
  }

  // SQLite starts the WAL over only when a write begins after a checkpoint copied all of
  // it. Under steady traffic a commit always lands between a checkpoint and the next write,
  // so the WAL would grow for as long as the traffic lasts; copying the last pages once the
  // commits pause lets the next write start it over. Once per WAL size: a reader that kept
  // a checkpoint from finishing is not polled.
  bool idle_checkpoint_due() const {
    if (!checkpointer) return false;
    const int frames = wal_frames.load(std::memory_order_relaxed);
    return frames >= k_idle_checkpoint_frames && frames != frames_copied.load(std::memory_order_relaxed) &&
           frames != frames_at_idle_checkpoint;
  }

  // Once the WAL holds k_checkpoint_frames pages. A checkpoint that a reader kept from
  // finishing leaves the WAL as it is: the next one waits until another k_checkpoint_frames
  // pages were added, or the WAL started over.
  bool checkpoint_due() {
    const int frames = wal_frames.load(std::memory_order_relaxed);
    if (frames < k_checkpoint_frames) return false;
    if (frames >= frames_at_checkpoint && frames < frames_at_checkpoint + k_checkpoint_frames) return false;
    frames_at_checkpoint = frames;
    return true;
  }

  // SQLite starts the WAL over at a COMMIT whose transaction began when every page of the
  // WAL had been copied back. Rounds that follow each other without a pause (a round stays
  // open while the syncer is busy or cooling down) never begin so: the checkpoint thread
  // copies what the last COMMIT wrote while the next round is already open, and the WAL
  // grows for as long as the traffic lasts (a gigabyte a minute at 200 messages/s was
  // seen). So, between two rounds, once the WAL is large and nearly all copied, the loop
  // copies the rest itself (PASSIVE on its own connection: no waiting for anyone; a copy
  // the checkpoint thread is running makes it give up at once, and the next COMMIT tries
  // again); the next round then begins on a fully copied WAL and its COMMIT starts it over.
  // The price is the last few hundred pages' copy and two syncs on the loop once per 16 MiB
  // of WAL.
  void restart_wal() {
    if (!checkpointer) return;
    const int frames = wal_frames.load(std::memory_order_relaxed);
    if (frames < k_restart_frames || frames - frames_copied.load(std::memory_order_relaxed) > k_restart_lag) return;
    const std::unique_lock hold(copying, std::try_to_lock);
    if (!hold.owns_lock()) return;  // the checkpoint thread is copying: the next COMMIT tries again
    // A refusal (another process's checkpoint, the disk) only leaves the WAL as it was: the
    // next COMMIT tries again, and the thread's next checkpoint reports a lasting cause.
    if (copy_back(db) != SQLITE_OK) return;
  }

  // sqlite3_wal_hook: runs on the loop's thread inside each COMMIT.
  static int on_wal_commit(void* state, sqlite3*, const char*, int frames) {
    static_cast<State*>(state)->wal_frames.store(frames, std::memory_order_relaxed);
    return 0;  // SQLITE_OK
  }

  void on_synced(std::int64_t generation, const std::string& why) {
    // A failed sync answers false: the waiters report it (a webhook gets 500, a send stays).
    const bool ok = why.empty();
    if (!ok) report(false, why);
    while (!unsynced.empty() && unsynced.front().first <= generation) {
      auto waiting = std::move(unsynced.front().second);
      unsynced.pop_front();
      answer(waiting, ok);
    }
  }

  void answer(std::vector<Waiter>& waiting, bool ok) {
    const auto now = std::chrono::steady_clock::now();
    for (auto& waiter : waiting) {
      stats.durable_waits.add(std::chrono::duration_cast<std::chrono::microseconds>(now - waiter.since).count());
      waiter.then(ok);
    }
  }

  // The syncer finished the sync of `generation` and, with an interval, its cool-down.
  void on_ready(std::int64_t generation) {
    if (generation < committed) return;  // another sync was asked for meanwhile: its turn
    syncer_ready = true;
    if (deferred) commit();
  }

  // The commit the round posted when it opened. While a sync is running, a round committed
  // now could only wait for the next one; left open until the syncer is ready, the rounds
  // of the meantime share one COMMIT, so a page they all touch (an index's last leaf, a
  // counter's row, the audit chain's head) is written to the WAL once instead of once per
  // round. At a production pace (a few steps per loop round) that is most of the WAL's
  // writes, and an interval makes the rounds longer still on a disk whose sync is fast; a
  // saturated loop makes large rounds anyway. The waiters lose little: their sync could not
  // have started sooner, and with an interval they wait at most that long more. With the
  // syncer ready (no traffic in the last interval) it commits at once. So does it while a
  // writer in another process waits: kept open, the rounds would hold the write lock almost
  // all the time, and that writer polls for it only now and then.
  void commit_when_due() {
    if (!open) return;
    if (wal && !syncer_ready) {
      if (writers && writers->others_waiting()) {
        ++stats.commits_for_writers;
      } else {
        deferred = true;
        return;
      }
    }
    commit();
  }

  // Tells the watcher of a failure, or of the first success after failures: a COMMIT that
  // changed rows (a failed sync after it reports again).
  void report(bool ok, const std::string& why) {
    if (ok && !failing) return;
    failing = !ok;
    if (watcher) watcher(ok, why);
  }

  void commit() {
    if (!open) return;
    // Each may write (savepoints in the open round) and register waiters or more of these.
    while (!before.empty())
      for (auto& then : std::exchange(before, {})) then();
    if (!open) return;  // one of them committed the round itself
    open = false;
    deferred = false;
    auto waiting = std::exchange(waiters, {});
    const auto committed_ok = internal::exec(db, "COMMIT");
    const bool ok = committed_ok.has_value();
    ++stats.commits;
    if (!ok) {
      ++stats.failed_commits;
      std::string why = "COMMIT: " + committed_ok.error().message;
      if (auto undone = internal::exec(db, "ROLLBACK"); !undone) why += "; ROLLBACK: " + undone.error().message;
      report(false, why);
      answer(waiting, false);
      return;
    }
    if (internal::Access::connection(db).total_changes() != changes_at_open) report(true, "");
    restart_wal();
    unsynced.emplace_back(++committed, std::move(waiting));
    if (wal) {
      syncer_ready = false;
      request_sync(committed);
      return;
    }
    post(common::named_step([weak = weak_from_this(), generation = committed] {
      if (auto self = weak.lock()) self->on_synced(generation, "");
    }));
  }
};

Round::Round(Database& db, Post post, std::chrono::microseconds interval)
    : m_state(std::make_shared<State>(db, std::move(post), interval)) {
  if (!m_state->wal) {
    internal::Access::attach_round(db, this);
    return;
  }
  // The syncer thread syncs instead. Should this fail, every COMMIT syncs by itself:
  // slower, never less durable.
  m_state->try_setting("PRAGMA synchronous=NORMAL");
  // No spilling of a round's pages into the WAL before its COMMIT: a full disk then fails
  // the COMMIT, which every writer recovers from (see the header), never a statement in the
  // middle of a round, which would leave that step failed. The cost is memory: a round's
  // changed pages stay in the cache until it commits.
  m_state->try_setting("PRAGMA cache_spill=OFF");
  if (auto other = Database::open(db.path(), Database::Mode::existing);
      other && internal::exec(db, "PRAGMA wal_autocheckpoint=0")) {
    m_state->checkpointer.emplace(std::move(*other));
    sqlite3_wal_hook(internal::Access::handle(db), &State::on_wal_commit,
                     m_state.get());  // replaces the autocheckpoint hook
  }
  internal::Access::attach_round(db, this);
  m_state->syncer = std::thread([state = m_state.get()] {
    common::name_this_thread("wal-sync");
    state->run_syncer();
  });
  if (m_state->checkpointer)
    m_state->checkpoint_thread = std::thread([state = m_state.get()] {
      common::name_this_thread("wal-checkpoint");
      state->run_checkpoints();
    });
}

Round::~Round() {
  auto& s = *m_state;
  s.commit();
  if (!s.wal) {
    s.on_synced(s.committed, "");
    internal::Access::attach_round(s.db, nullptr);
    return;
  }
  {
    const std::lock_guard lock(s.mutex);
    s.stopping = true;
  }
  s.wake.notify_one();
  s.syncer.join();
  s.checkpoint_wake.notify_one();
  if (s.checkpoint_thread.joinable()) s.checkpoint_thread.join();
  // The syncer's last results may still be queued on the loop: settle them here, with a
  // final sync of our own, so no waiter is left behind.
  // The connection's own settings again. A failure here is kept with the others, where no
  // one reads it any more: the owner closes the connection next (shutdown).
  s.try_setting("PRAGMA synchronous=FULL");
  s.try_setting("PRAGMA cache_spill=ON");
  if (s.checkpointer) {
    sqlite3_wal_hook(internal::Access::handle(s.db), nullptr, nullptr);
    s.try_setting("PRAGMA wal_autocheckpoint=1000");  // SQLite's own checkpoints again
  }
  const int fd = open_wal(s.db);
  std::string why;  // no WAL file: nothing was written
  if (fd >= 0 && ::fdatasync(fd) != 0) why = std::string("fdatasync of the WAL file: ") + std::strerror(errno);
  if (fd >= 0) ::close(fd);
  s.on_synced(s.committed, why);
  internal::Access::attach_round(s.db, nullptr);
}

Result<void> Round::open() {
  auto& s = *m_state;
  if (s.open) return {};
  if (auto ok = internal::exec(s.db, begin_write(s.db.backend())); !ok) return ok;
  s.open = true;
  s.changes_at_open = internal::Access::connection(s.db).total_changes();
  s.post(common::named_step([weak = std::weak_ptr<State>(m_state)] {
    if (auto state = weak.lock()) state->commit_when_due();
  }));
  return {};
}

void Round::after_commit(std::function<void(bool)> then) {
  if (auto ok = open(); !ok) {
    // Could not even begin: nothing of this step is stored.
    m_state->post([then = std::move(then)] { then(false); });
    return;
  }
  m_state->waiters.push_back({std::chrono::steady_clock::now(), std::move(then)});
}

void Round::before_commit(std::function<void()> then) {
  if (auto ok = open(); !ok) {
    m_state->post(std::move(then));
    return;
  }
  m_state->before.push_back(std::move(then));
}

void Round::commit() { m_state->commit(); }

void Round::watch(Watcher watcher) { m_state->watcher = std::move(watcher); }

const std::vector<std::string>& Round::setting_failures() const { return m_state->setting_failures; }

Round::Stats Round::stats() const {
  Stats out = m_state->stats;
  const std::lock_guard lock(m_state->mutex);
  out.syncs = m_state->syncs;
  out.failed_syncs = m_state->failed_syncs;
  out.sync_times = m_state->sync_times;
  out.checkpoints = m_state->checkpoints;
  out.failed_checkpoints = m_state->failed_checkpoints;
  out.last_checkpoint_error = m_state->last_checkpoint_error;
  out.wal_pages = m_state->wal_frames.load(std::memory_order_relaxed);
  return out;
}

void after_commit(Database& db, std::function<void(bool)> then) {
  if (auto* round = internal::Access::round(db)) return round->after_commit(std::move(then));
  then(true);
}

bool before_commit(Database& db, std::function<void()> then) {
  auto* round = internal::Access::round(db);
  if (round == nullptr) return false;
  round->before_commit(std::move(then));
  return true;
}

}  // namespace dispatchd::store
