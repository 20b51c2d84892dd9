#pragma once
#ifndef DISPATCHD_INTERNAL_LLM
#error "llm/internal/ is private to llm/: include the module's public headers instead"
#endif
// The real `wait` of RetryDeps and BreakerDeps: `then` runs on `io` once `delay` has passed,
// on an Asio steady_timer of its own (no thread sleeps). REQUIRES: `io` outlives the waits.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>

namespace dispatchd::llm::internal {

inline std::function<void(std::chrono::milliseconds, std::move_only_function<void()>)> timer_wait(
    boost::asio::io_context& io) {
  return [&io](std::chrono::milliseconds delay, std::move_only_function<void()> then) {
    auto timer = std::make_shared<boost::asio::steady_timer>(io, delay);
    timer->async_wait([timer, then = std::move(then)](const boost::system::error_code& ec) mutable {
      if (!ec) then();
    });
  };
}

}  // namespace dispatchd::llm::internal
