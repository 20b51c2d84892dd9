#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "daemon/read_ahead.h"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <cstdint>
#include <memory>

#include "common/thread_reads.h"
#include "store/read_ahead.h"

namespace dispatchd::daemon {

connectors::ReadAhead read_ahead_on(ReadThread& thread, boost::asio::io_context& io, std::size_t history) {
  return [&thread, &io, history](connectors::InboundEvents keys, std::move_only_function<void(std::int64_t)> then) {
    // ReadThread takes copyable functions; the count travels from the read to the answer.
    auto blocks = std::make_shared<std::int64_t>(0);
    auto done = std::make_shared<std::move_only_function<void(std::int64_t)>>(std::move(then));
    thread.run(
        [keys = std::move(keys), blocks, history](store::Database& db) {
          const std::int64_t before = common::blocks_read_by_this_thread();
          if (auto read = store::read_ahead(db, keys.messages, keys.reports, history); !read)
            spdlog::debug("read-ahead: {}", read.error().message);  // the loop reads them itself
          *blocks = common::blocks_read_by_this_thread() - before;
          return Response{200, ""};
        },
        [&io, blocks, done](Response) { boost::asio::post(io, [blocks, done] { (*done)(*blocks); }); });
  };
}

}  // namespace dispatchd::daemon
