#include "connectors/imap/internal/worker.h"

#include <pthread.h>

#include <utility>

namespace dispatchd::imap::detail {

Worker::Worker(std::string name) : m_name(std::move(name)), m_thread([this] { run(); }) {}

Worker::~Worker() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
    m_jobs.clear();
  }
  m_wake.notify_one();
  m_thread.join();
}

void Worker::submit(std::move_only_function<void()> job) {
  {
    std::lock_guard lock(m_mutex);
    if (m_stopping) return;
    m_jobs.push_back(std::move(job));
  }
  m_wake.notify_one();
}

void Worker::run() {
  const std::string thread_name = m_name.substr(0, 15);
  if (pthread_setname_np(pthread_self(), thread_name.c_str()) != 0) {
    // Only `ps` shows the name: a thread without it works alike.
  }
  while (true) {
    std::move_only_function<void()> job;
    {
      std::unique_lock lock(m_mutex);
      m_wake.wait(lock, [this] { return m_stopping || !m_jobs.empty(); });
      if (m_stopping) return;
      job = std::move(m_jobs.front());
      m_jobs.pop_front();
    }
    job();
  }
}

}  // namespace dispatchd::imap::detail
