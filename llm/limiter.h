#pragma once
// Bounds how many operations run at once (llm.max_concurrency): an asynchronous
// semaphore. acquire() hands its callback a Permit as soon as fewer than `limit` permits
// are out, first come first served; destroying the Permit gives the slot to the next
// waiter. No thread ever blocks.
//
// LimitedProvider applies a Limiter to every call of a Provider. Wrap the HTTP provider
// with it and that with RetryingProvider, so that a call waiting out a backoff holds no slot:
//   RetryingProvider(std::make_unique<LimitedProvider>(make_provider(...), limiter), ...)
//
// Thread-safety: acquire() and Permit destruction may happen on any thread; callbacks run
// on the io_context.

#include <cstddef>
#include <functional>
#include <memory>

#include "llm/provider.h"

namespace boost::asio {
class io_context;
}

namespace dispatchd::llm {

class Limiter {
  struct State;

 public:
  // Holds one slot until destroyed (or release()d). Move-only.
  class Permit {
   public:
    Permit() = default;
    Permit(Permit&& other) noexcept = default;
    Permit& operator=(Permit&& other) noexcept;
    ~Permit() { release(); }
    void release();
    explicit operator bool() const { return m_state != nullptr; }

   private:
    friend class Limiter;
    explicit Permit(std::shared_ptr<State> state) : m_state(std::move(state)) {}
    std::shared_ptr<State> m_state;
  };

  // REQUIRES: limit >= 1; `io` outlives the limiter and its permits.
  Limiter(boost::asio::io_context& io, std::size_t limit);

  // `then` runs on the io_context, never inside acquire(), once a slot is free.
  void acquire(std::move_only_function<void(Permit)> then);

  // A new limit (at least 1), e.g. this instance's share of a deployment's limit
  // (store::instance_share). Raised: waiters get the new slots at once. Lowered: permits
  // already out stay valid, and new ones wait until fewer than the new limit are out.
  void set_limit(std::size_t limit);
  std::size_t limit() const;

  std::size_t in_use() const;
  std::size_t waiting() const;

 private:
  std::shared_ptr<State> m_state;
};

class LimitedProvider final : public Provider {
 public:
  // REQUIRES: `limiter` outlives the provider's pending calls.
  LimitedProvider(std::unique_ptr<Provider> inner, Limiter& limiter);

  void complete(CompletionRequest request, CompletionCallback done) override;
  const std::string& name() const override { return m_inner->name(); }
  const std::string& model() const override { return m_inner->model(); }

 private:
  std::shared_ptr<Provider> m_inner;
  Limiter& m_limiter;
};

}  // namespace dispatchd::llm
