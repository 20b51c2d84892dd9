#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "daemon/read_ahead.h"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <chrono>
#include <memory>

#include "store/read_ahead.h"

namespace dispatchd::daemon {

connectors::ReadAhead read_ahead_on(ReadThread& thread, boost::asio::io_context& io, std::size_t history) {
  return [&thread, &io, history](connectors::InboundEvents keys,
                                 std::move_only_function<void(std::chrono::nanoseconds)> then) {
    // ReadThread takes copyable functions; the result travels from the read to the answer.
    auto took = std::make_shared<std::chrono::nanoseconds>(0);
    auto done = std::make_shared<std::move_only_function<void(std::chrono::nanoseconds)>>(std::move(then));
    thread.run(
        [keys = std::move(keys), took, history](store::Database& db) {
          const auto started = std::chrono::steady_clock::now();
          if (auto read = store::read_ahead(db, keys.messages, keys.reports, history); !read)
            spdlog::debug("read-ahead: {}", read.error().message);  // the loop reads them itself
          *took = std::chrono::steady_clock::now() - started;
          return Response{200, ""};
        },
        [&io, took, done](Response) { boost::asio::post(io, [took, done] { (*done)(*took); }); });
  };
}

}  // namespace dispatchd::daemon
