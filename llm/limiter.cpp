#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "llm/limiter.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <deque>
#include <mutex>
#include <vector>

namespace dispatchd::llm {

struct Limiter::State : std::enable_shared_from_this<State> {
  State(boost::asio::io_context& context, std::size_t max) : io(context), limit(max) {}

  // Hands a slot to `then` on the io_context. REQUIRES: the slot is already counted.
  void grant(std::move_only_function<void(Permit)> then) {
    boost::asio::post(io, [self = shared_from_this(), then = std::move(then)]() mutable { then(Permit(self)); });
  }

  void release() {
    std::unique_lock lock(mutex);
    // Over a lowered limit, the slot is not passed on: in_use falls to the new limit first.
    if (queue.empty() || in_use > limit) {
      --in_use;
      return;
    }
    auto next = std::move(queue.front());
    queue.pop_front();
    lock.unlock();
    grant(std::move(next));  // the slot passes on: in_use stays
  }

  boost::asio::io_context& io;
  std::size_t limit;         // guarded by `mutex`
  mutable std::mutex mutex;  // guards in_use and queue
  std::size_t in_use = 0;
  std::deque<std::move_only_function<void(Permit)>> queue;
};

Limiter::Permit& Limiter::Permit::operator=(Permit&& other) noexcept {
  if (this != &other) {
    release();
    m_state = std::move(other.m_state);
  }
  return *this;
}

void Limiter::Permit::release() {
  if (auto state = std::move(m_state)) state->release();
}

Limiter::Limiter(boost::asio::io_context& io, std::size_t limit) : m_state(std::make_shared<State>(io, limit)) {}

void Limiter::acquire(std::move_only_function<void(Permit)> then) {
  std::unique_lock lock(m_state->mutex);
  if (m_state->in_use >= m_state->limit) {
    m_state->queue.push_back(std::move(then));
    return;
  }
  ++m_state->in_use;
  lock.unlock();
  m_state->grant(std::move(then));
}

void Limiter::set_limit(std::size_t limit) {
  std::vector<std::move_only_function<void(Permit)>> granted;
  {
    std::lock_guard lock(m_state->mutex);
    m_state->limit = std::max<std::size_t>(limit, 1);
    while (!m_state->queue.empty() && m_state->in_use < m_state->limit) {
      ++m_state->in_use;
      granted.push_back(std::move(m_state->queue.front()));
      m_state->queue.pop_front();
    }
  }
  for (auto& then : granted) m_state->grant(std::move(then));
}

std::size_t Limiter::limit() const {
  std::lock_guard lock(m_state->mutex);
  return m_state->limit;
}

std::size_t Limiter::in_use() const {
  std::lock_guard lock(m_state->mutex);
  return m_state->in_use;
}

std::size_t Limiter::waiting() const {
  std::lock_guard lock(m_state->mutex);
  return m_state->queue.size();
}

LimitedProvider::LimitedProvider(std::unique_ptr<Provider> inner, Limiter& limiter)
    : m_inner(std::move(inner)), m_limiter(limiter) {}

void LimitedProvider::complete(CompletionRequest request, CompletionCallback done) {
  m_limiter.acquire(
      [inner = m_inner, request = std::move(request), done = std::move(done)](Limiter::Permit permit) mutable {
        inner->complete(std::move(request),
                        [permit = std::move(permit), done = std::move(done)](CompletionResult result) mutable {
                          permit.release();  // before `done`, so that its follow-up call can take the slot
                          done(std::move(result));
                        });
      });
}

}  // namespace dispatchd::llm
