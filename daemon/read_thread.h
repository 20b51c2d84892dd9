#pragma once
// Reads that may take a while, off the event loop: a thread of its own with a store
// connection of its own. The daemon has two: `staff-reads`, and on SQLite `read-ahead` for
// the channels (daemon/read_ahead.h). The staff API's listings, cases and trails run on the
// first: on a history of millions of messages a cold page reads from disk for 8-17 ms
// (BENCHMARKS.md, "five million messages"), and on the loop every webhook and model answer
// would wait that long.
//
// The connection sees what was committed when each read began (SQLite's WAL lets it read
// while the loop writes; on PostgreSQL each statement sees committed rows). A read that
// follows a staff decision sees it: a decision is answered after its COMMIT.
//
// run() queues a read and returns at once; the read's Response is handed to `respond` on
// the io_context's thread. Reads run one at a time, in order. At most `max_queued` wait:
// past that run() answers 503 at once, so a client paging in a loop cannot grow the queue.
// A read that throws is answered 500 (exceptions never leave the thread). A read whose
// PostgreSQL connection was lost (a server restart) runs once more on a new connection, and
// while none can be made reads are answered 503. The destructor
// joins the thread after the read in progress; reads still queued are dropped unanswered,
// so destroy it only once the listener has stopped answering.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include "daemon/http_server.h"
#include "store/database.h"

namespace boost::asio {
class io_context;
}

namespace dispatchd::daemon {

using Read = std::function<Response(store::Database&)>;

class ReadThread {
 public:
  static constexpr std::size_t k_default_queue = 64;

  // `db` is used on the new thread only from now on; the thread is named `name` (at most 15
  // characters, as Linux keeps them).
  ReadThread(boost::asio::io_context& io, store::Database db, std::size_t max_queued = k_default_queue,
             const char* name = "staff-reads");
  ~ReadThread();
  ReadThread(const ReadThread&) = delete;
  ReadThread& operator=(const ReadThread&) = delete;

  // On the io_context's thread.
  void run(Read read, Respond respond);

 private:
  void work();
  Response answer(const Read& read);
  Response attempt(const Read& read);

  boost::asio::io_context& m_io;
  store::Database m_db;
  std::size_t m_max_queued;
  const char* m_name;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<std::pair<Read, Respond>> m_queue;  // guarded by m_mutex
  bool m_stopping = false;                       // guarded by m_mutex
  std::thread m_thread;                          // last: starts once the rest is built
};

}  // namespace dispatchd::daemon
