#pragma once
#ifndef DISPATCHD_INTERNAL_CONNECTORS
#error "connectors/imap/internal/ is private to connectors/: include the module's public headers instead"
#endif
// A thread of its own for the blocking IMAP and SMTP clients (internal): jobs run one after
// the other, in the order submitted. A job reports back by posting to the daemon's loop
// (ChannelDeps::post); the worker knows nothing of the loop.
//
// Destruction drops the jobs not started and joins the thread after the running one: the
// owner first ends what may wait long (Client::interrupter for an IDLE), and destroys what
// the jobs point at only after the worker.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace dispatchd::imap::detail {

class Worker {
 public:
  // `name`: the thread's name as `ps` and `top` show it (15 bytes at most are kept).
  explicit Worker(std::string name);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Queues `job`; thread-safe. A job that throws ends the process (as on the loop).
  void submit(std::move_only_function<void()> job);

 private:
  void run();

  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<std::move_only_function<void()>> m_jobs;
  bool m_stopping = false;
  std::string m_name;
  std::thread m_thread;  // last: started once the rest is ready
};

}  // namespace dispatchd::imap::detail
