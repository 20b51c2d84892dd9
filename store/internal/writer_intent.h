#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Another process's writer waiting behind the daemon's group commit (store/round.h), told
// through the database file itself.
//
// A Round keeps its transaction open for up to database_commit_interval_ms to batch
// commits; at a steady few hundred steps a second the write lock is then almost never free,
// and a writer in another process (`dispatchctl archive`, `queue`, `staff`), which SQLite
// lets retry only at its busy handler's polls, would wait out its busy timeout. So while a
// writer without a Round waits in BEGIN IMMEDIATE it holds an open-file-description read
// lock on one byte of the database file far past SQLite's own locks (which sit at 1 GiB);
// a Round that sees such a lock commits at once instead of keeping its round open, which
// leaves the write lock free between rounds as often as without the interval.
//
// Advisory only: a writer that does not announce itself (an `sqlite3` shell) still gets
// the lock, only at the pace of the gaps. Failing to open or lock the file turns this off
// (nothing announced, nobody seen); it never fails a transaction.

#include <string>

namespace dispatchd::store::internal {

class WriterIntent {
 public:
  // Opens `path` (the SQLite database file) read-only for the locks.
  explicit WriterIntent(const std::string& path);
  ~WriterIntent();
  WriterIntent(WriterIntent&& other) noexcept;
  WriterIntent& operator=(WriterIntent&& other) noexcept;
  WriterIntent(const WriterIntent&) = delete;
  WriterIntent& operator=(const WriterIntent&) = delete;

  // Marks a writer of this file description as waiting, until withdraw(). Idempotent.
  void announce();
  void withdraw();
  bool announced() const { return m_announced; }
  // True when another open file description (in any process) has announced a writer.
  bool others_waiting() const;

 private:
  int m_fd = -1;
  bool m_announced = false;
};

}  // namespace dispatchd::store::internal
