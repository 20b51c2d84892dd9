#pragma once
// Drives an io_context from the test thread until a condition holds.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <stdexcept>

namespace dispatchd::test {

// Runs handlers of `io` until `done()` is true. Throws after `limit` (a hang, never a
// timing assertion: the limit is far above what the test needs).
template <typename Done>
void run_until(boost::asio::io_context& io, Done&& done, std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  io.restart();
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) throw std::runtime_error("run_until: gave up waiting");
    io.run_one_for(std::chrono::milliseconds(100));
    if (io.stopped()) io.restart();
  }
}

}  // namespace dispatchd::test
