// The concurrency limit: the Limiter on its own, then 200 model calls through the real
// curl-multi transport with at most 64 in flight.
#include <catch2/catch.hpp>
#include <filesystem>

#include "llm/limiter.h"
#include "tests/llm/harness.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

}  // namespace

TEST_CASE("Limiter hands out at most `limit` permits, the rest first come first served") {
  boost::asio::io_context io;
  llm::Limiter limiter(io, 2);
  std::vector<llm::Limiter::Permit> held;
  std::vector<int> order;
  for (int i = 0; i < 5; ++i)
    limiter.acquire([&, i](llm::Limiter::Permit permit) {
      order.push_back(i);
      held.push_back(std::move(permit));
    });
  CHECK(order.empty());  // never inside acquire()
  io.run();
  io.restart();
  CHECK(order == std::vector<int>{0, 1});
  CHECK(limiter.in_use() == 2);
  CHECK(limiter.waiting() == 3);

  held.erase(held.begin());  // one slot passes to the next waiter
  io.run();
  io.restart();
  CHECK(order == std::vector<int>{0, 1, 2});
  CHECK(limiter.in_use() == 2);

  held.clear();
  io.run();
  io.restart();
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
  held.clear();
  CHECK(limiter.in_use() == 0);
  CHECK(limiter.waiting() == 0);
}

TEST_CASE("Limiter's limit changes while permits are out: raised grants waiters, lowered drains first") {
  boost::asio::io_context io;
  llm::Limiter limiter(io, 3);
  std::vector<llm::Limiter::Permit> held;
  int granted = 0;
  const auto take = [&] {
    limiter.acquire([&](llm::Limiter::Permit permit) {
      ++granted;
      held.push_back(std::move(permit));
    });
  };
  for (int i = 0; i < 6; ++i) take();
  io.run();
  io.restart();
  CHECK(granted == 3);

  limiter.set_limit(1);  // a second instance came up: this one's share fell
  CHECK(limiter.limit() == 1);
  held.erase(held.begin());  // 2 out, over the new limit: the slot is not passed on
  io.run();
  io.restart();
  CHECK(granted == 3);
  CHECK(limiter.in_use() == 2);
  held.erase(held.begin());
  io.run();
  io.restart();
  CHECK(granted == 3);
  CHECK(limiter.in_use() == 1);
  held.erase(held.begin());  // 0 out, under the limit: the next waiter gets it
  io.run();
  io.restart();
  CHECK(granted == 4);
  CHECK(limiter.in_use() == 1);

  limiter.set_limit(4);  // the other instance died: waiters get the new slots at once
  io.run();
  io.restart();
  CHECK(granted == 6);
  CHECK(limiter.in_use() == 3);
  CHECK(limiter.waiting() == 0);
  limiter.set_limit(0);
  CHECK(limiter.limit() == 1);  // never 0: an instance always makes progress
  held.clear();
}

TEST_CASE("200 calls, limit 64, 200 ms model latency: 64 in flight, never more, on a fixed set of threads") {
  fakes::FakeModelServer fake;
  fake.set_fallback(fakes::FakeReply::text(R"({"action":"escalate_to_human"})").after(200ms));
  fake.hold_until_in_flight(64);  // reaching 64 must not depend on how fast the machine is
  boost::asio::io_context io;
  net::CurlTransport transport(io);
  llm::ProviderConfig config{
      .kind = llm::ProviderKind::openai, .base_url = fake.base_url(fakes::Dialect::openai), .model = "m"};
  llm::Limiter limiter(io, 64);
  llm::LimitedProvider provider(llm::make_provider(config, transport), limiter);

  const std::size_t threads_before = thread_count();
  std::size_t threads_max = threads_before;
  std::size_t in_use_max = 0;
  int ok = 0;
  int done = 0;
  for (int i = 0; i < 200; ++i)
    provider.complete(test::reask_request(), [&](llm::CompletionResult result) {
      ++done;
      if (result) ++ok;
      threads_max = std::max(threads_max, thread_count());
      in_use_max = std::max(in_use_max, limiter.in_use());
    });
  test::run_until(io, [&] { return done == 200; });

  CHECK(ok == 200);
  CHECK(fake.request_count() == 200);
  CHECK(fake.max_in_flight() == 64);
  CHECK(in_use_max <= 64);
  CHECK(threads_max == threads_before);  // no thread per request: this one and the fake's
  CHECK(threads_before <= 3);
}
