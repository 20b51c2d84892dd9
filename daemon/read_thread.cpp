#include "daemon/read_thread.h"

#include "common/thread_name.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <exception>

namespace dispatchd::daemon {

ReadThread::ReadThread(boost::asio::io_context& io, store::Database db, std::size_t max_queued, const char* name)
    : m_io(io), m_db(std::move(db)), m_max_queued(max_queued), m_name(name), m_thread([this] { work(); }) {}

ReadThread::~ReadThread() {
  {
    const std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_one();
  m_thread.join();
}

void ReadThread::run(Read read, Respond respond) {
  {
    const std::lock_guard lock(m_mutex);
    if (m_queue.size() < m_max_queued) {
      m_queue.emplace_back(std::move(read), std::move(respond));
      m_wake.notify_one();
      return;
    }
  }
  respond(
      Response{503, "too many reads waiting; try again\n", "text/plain; charset=utf-8", {{"Retry-After", "1"}}, {}});
}

Response ReadThread::attempt(const Read& read) {
  try {
    return read(m_db);
  } catch (const std::exception& e) {
    return Response{500, std::string("the read failed: ") + e.what() + "\n"};
  } catch (...) {
    return Response{500, "the read failed\n"};
  }
}

// A read changes nothing, so one cut by a lost PostgreSQL connection runs once more on a new
// one. The Database reconnects at a query outside a transaction, paced (store/database.h).
Response ReadThread::answer(const Read& read) {
  for (int tries = 0;; ++tries) {
    if (m_db.unreachable()) {
      if (auto back = m_db.ping(); !back)
        return Response{503, "the database is out of reach: " + back.error().message + "\n"};
    }
    Response response = attempt(read);
    if (!m_db.unreachable() || tries == 1) return response;
  }
}

void ReadThread::work() {
  common::name_this_thread(m_name);
  for (;;) {
    std::pair<Read, Respond> job;
    {
      std::unique_lock lock(m_mutex);
      m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
      if (m_stopping) return;
      job = std::move(m_queue.front());
      m_queue.pop_front();
    }
    Response response = answer(job.first);
    boost::asio::post(m_io, [respond = std::move(job.second), response = std::move(response)]() mutable {
      respond(std::move(response));
    });
  }
}

}  // namespace dispatchd::daemon
