#pragma once
// Units of work: what a writer on the event loop does once its writes are durable, and what
// it does when they were lost. With a Round attached (store/round.h) a write is not durable
// when its store call returns: the round's COMMIT or the WAL sync after it may still fail
// (a full disk), and then the whole round is rolled back. Every writer that acts on a write
// (tells someone, sends, applies) or must see it through (an outbox result) uses one of:
//
//   commit_then(db, on_durable, on_lost)
//       Ends a unit of work: what the caller wrote on `db` since its last one. Exactly one of
//       the two runs, exactly once. Use it when a loss needs no retry, or the caller retries
//       by its own means: the SIGHUP reload (lost: refused and logged; the old catalog stays).
//
//   Redo
//       Work that must be stored, and is done again after a pause when its round was lost;
//       the pause grows with each loss in a row (exponential_backoff, common/backoff.h) so a
//       full disk does not become a stream of retries. Used by the agent (a lost decision:
//       its message is handed back after the pause and decided again; 1 s doubling to 30 s).
//       The outbox pump (daemon/outbox_pump.cpp): a send result is a Write given to run();
//       with Backoff{1 s, 1 s} it is written again every second until stored:
//
//           store::Redo redo(db, {1s, 1s}, {.wake_after = [&](auto delay) { timer_in(delay); }});
//           redo.run([id, wamid, at](store::Database& d) { return store::complete_send(d, id, wamid, at); });
//           ...when the timer fires, or at the start of every pump:  redo.resume();
//
// Thread-safety: the loop's thread only, like the Database. Every callback (on_durable,
// on_lost, a Write, Deps::wake_after) runs on that thread.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

#include "common/backoff.h"
#include "store/error.h"

namespace dispatchd::store {

class Database;

// Runs exactly one of `on_durable` and `on_lost`, exactly once, on the loop's thread:
//   on_durable  what the caller wrote is committed and on disk;
//   on_lost     its round's COMMIT or WAL sync failed: none of it is stored (the store's
//               states let the caller do it again; store/round.h).
// With a Round attached to `db` both run later from the loop, never inside commit_then.
// Without one, every transaction has already committed by itself (synchronous=FULL):
// on_durable runs at once, inside commit_then, and on_lost never runs.
// REQUIRES: the loop runs until the round is answered (a Round answers every waiter, at
// the latest when it is destroyed).
void commit_then(Database& db, std::function<void()> on_durable, std::function<void()> on_lost);

class Redo {
 public:
  // One unit of work: store calls on the database it is given. What it returns decides:
  //   ok                   its round is ended with commit_then: durable -> done; lost -> kept;
  //   a retryable error    (busy, io, full: store/error.h) kept, as if its round was lost;
  //   a permanent error    dropped: doing it again would fail again. A Write that must tell
  //                        someone does so before returning it.
  // It may run several times: each run must be whole and safe to repeat (a state change that
  // checks the current state, e.g. store::complete_send or store::release_lease).
  using Write = std::function<Result<void>(Database& db)>;

  struct Deps {
    // Monotonic time, for the pause; default (empty): std::chrono::steady_clock::now.
    std::function<std::chrono::steady_clock::time_point()> now;
    // REQUIRED. Called when a pause starts, with its length: the owner calls resume() once
    // that much time has passed (its own timer on the loop; an earlier call does nothing
    // while paused).
    std::function<void(std::chrono::milliseconds delay)> wake_after;
  };

  // `backoff`: the pause after the n-th loss in a row is exponential_backoff(backoff, n).
  // REQUIRES: `db` outlives the Redo. Writes still kept when it is destroyed are dropped,
  // as a crash would drop them: the store's states make the next start redo the work
  // (expired leases are taken again; a `sending` row becomes `unknown`).
  Redo(Database& db, Backoff backoff, Deps deps);
  ~Redo();
  Redo(const Redo&) = delete;
  Redo& operator=(const Redo&) = delete;

  // A loss starts a pause, or does nothing while one is running: losses in one round (one
  // failed COMMIT loses every unit in it) make one pause. The row of losses (and so the
  // length of the next pause) ends only when the owner's own work is stored: a unit ended
  // through commit_then() below or a Write given to run() that is durable. Work given to
  // later() is how the owner recovers; that it is stored says nothing about the work that
  // was lost (a small write can fit where a decision does not).

  // Like store::commit_then, counting: durable -> the row of losses ends, then on_durable;
  // lost -> a loss (the pause starts or goes on), then on_lost. Both still run, exactly once,
  // when the Redo is gone by then (without counting).
  void commit_then(std::function<void()> on_durable, std::function<void()> on_lost);

  // Runs `write` now as the owner's unit of work; when lost, it is kept and run again by
  // resume() after the pause, until it is stored or fails for good.
  void run(Write write);

  // A loss (the pause starts or goes on), and `write` is kept: resume() runs it once the
  // pause is over, and again after each loss, until it is stored or fails for good.
  void later(Write write);

  // A loss outside any unit of work (a store call that failed with a retryable error).
  void failed();

  // Runs the kept writes when no pause is running (in the order they were kept); does
  // nothing while one is. Call it when Deps::wake_after's delay has passed, and whenever
  // convenient (before taking new work).
  void resume();

  bool paused() const;                      // a pause is running (Deps::now before its end)
  std::chrono::milliseconds pause() const;  // the latest pause's length; 0 once the row ended
  std::size_t kept() const;                 // writes waiting for resume()

  struct State;

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::store
