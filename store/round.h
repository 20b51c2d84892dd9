#pragma once
// Group commit for a single-threaded event loop.
//
// While a Round is attached to a Database, the first top-level transaction() of a loop
// round opens one outer transaction (BEGIN IMMEDIATE) and posts its commit to the end of
// the round; every store call until then is a savepoint inside it, so a call that fails
// still undoes only its own changes. Pages touched by many calls are written to the WAL
// once per round instead of once per call.
//
// Durability is the connection's (synchronous=FULL: the round's COMMIT returns once the
// WAL is on disk), so a round costs one sync however many steps it holds. A step whose
// effect leaves the process (answering 200 to a webhook, calling the Graph API after
// marking an action `sending`, telling staff a decision is stored) registers
// after_commit(then) and acts inside `then`, never before the commit.
//
// A failed COMMIT rolls the whole round back and calls every waiter with false; the
// store's state machine then redoes those steps (a message is taken and decided again;
// nothing is sent twice, since no send leaves before its `sending` mark is committed).
//
// Thread-safety: the loop's thread only, like the Database.

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dispatchd::store {

class Database;

class Round {
 public:
  // `post` runs a function later on the loop's thread, after what is already queued
  // (boost::asio::post). Attaches itself to `db` until destroyed.
  using Post = std::function<void(std::function<void()>)>;
  Round(Database& db, Post post);
  ~Round();  // commits what is open, detaches
  Round(const Round&) = delete;
  Round& operator=(const Round&) = delete;

  // Opens the round's transaction when none is open (store/transaction.h calls it).
  std::expected<void, std::string> open();
  // Runs `then(committed)` once the current round has committed (or failed to). With no
  // round open, one is opened: `then` never runs before the caller returns.
  void after_commit(std::function<void(bool committed)> then);
  // Commits the open round now (the posted commit finds nothing left to do).
  void commit();

  struct Stats {
    std::int64_t commits = 0;
    std::int64_t failed_commits = 0;
  };
  const Stats& stats() const { return m_stats; }

 private:
  Database& m_db;
  Post m_post;
  bool m_open = false;
  std::shared_ptr<Round*> m_self = std::make_shared<Round*>(this);  // a posted commit may outlive us
  std::vector<std::function<void(bool)>> m_waiters;
  Stats m_stats;
};

}  // namespace dispatchd::store

namespace dispatchd::store {

// Runs `then(committed)` after what the caller just wrote is committed: after the round's
// commit when a Round is attached to `db`, else at once (every transaction has committed
// by itself).
void after_commit(Database& db, std::function<void(bool committed)> then);

}  // namespace dispatchd::store
