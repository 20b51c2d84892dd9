#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "common/handler_timing.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <thread>
#include <typeinfo>
#include <vector>

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

// The bucket of the histogram whose upper bound is `us`.
std::int64_t at_most(const common::HandlerTimes::Snapshot& s, std::int64_t us) {
  for (std::size_t i = 0; i < common::HandlerTimes::k_bounds_us.size(); ++i)
    if (common::HandlerTimes::k_bounds_us[i] == us) return s.at_most[i];
  FAIL("no bucket at " << us << " us");
  return -1;
}

}  // namespace

namespace dispatchd::test_loop {
// A step of our own that holds the loop too long.
void post_slow_step(boost::asio::io_context& io) {
  boost::asio::post(io, [] { std::this_thread::sleep_for(11ms); });
}
// The same, posted through a type-erasing function and named.
void post_named_slow_step(const std::function<void(std::function<void()>)>& post) {
  post(common::named_step([] { std::this_thread::sleep_for(11ms); }));
}
// A callback that takes an answer, handed to something that posts it back type-erased, as
// net::ThreadedTransport does with a transport's callbacks.
void answer_slowly(boost::asio::io_context& io) {
  std::function<void(int)> done =
      common::named_step([](int answer) { std::this_thread::sleep_for(std::chrono::milliseconds(answer)); });
  boost::asio::post(io, [done = std::move(done)] { done(11); });
}
}  // namespace dispatchd::test_loop

TEST_CASE("handler timing: each step the loop runs is timed, a long one falls in its bucket", "[net]") {
  common::HandlerTimes times;
  boost::asio::io_context io(1);
  {
    const common::TimeHandlers timed(times);
    boost::asio::post(io, [] {});
    boost::asio::post(io, [] { std::this_thread::sleep_for(12ms); });
    boost::asio::steady_timer timer(io, 1ms);
    timer.async_wait([](const boost::system::error_code&) {});
    io.run();
  }
  const auto s = times.snapshot();
  CHECK(s.count == 3);
  CHECK(s.max_us >= 12'000);
  CHECK(s.sum_us >= 12'000);
  // The two quick ones within 10 ms, the sleeper over it.
  CHECK(at_most(s, 10'000) == 2);
  CHECK(at_most(s, 1'000'000) == 3);
}

TEST_CASE("handler timing: a handler run inside another counts once, as part of the outer one", "[net]") {
  common::HandlerTimes times;
  boost::asio::io_context io(1);
  const common::TimeHandlers timed(times);
  bool inner_ran = false;
  boost::asio::post(io, [&] {
    // dispatch from the loop's own thread runs the function at once, inside this handler.
    boost::asio::dispatch(io, [&] {
      inner_ran = true;
      std::this_thread::sleep_for(11ms);
    });
  });
  io.run();
  REQUIRE(inner_ran);
  const auto s = times.snapshot();
  CHECK(s.count == 1);
  CHECK(s.max_us >= 11'000);
  CHECK(at_most(s, 10'000) == 0);
}

TEST_CASE("handler timing: only the thread that installed it is timed, and only while it is installed", "[net]") {
  common::HandlerTimes times;
  boost::asio::io_context elsewhere(1);
  boost::asio::post(elsewhere, [] { std::this_thread::sleep_for(2ms); });
  boost::asio::io_context here(1);
  boost::asio::post(here, [] {});
  {
    const common::TimeHandlers timed(times);
    std::thread other([&] { elsewhere.run(); });
    other.join();
    here.run();
  }
  CHECK(times.snapshot().count == 1);  // `here`'s handler, not the other thread's

  here.restart();
  boost::asio::post(here, [] {});
  here.run();  // no longer installed
  CHECK(times.snapshot().count == 1);
}

TEST_CASE("handler timing: steps over 10 ms are counted until taken, the longest named by what posted it", "[net]") {
  common::HandlerTimes times;
  boost::asio::io_context io(1);
  const common::TimeHandlers timed(times);
  CHECK_FALSE(times.take_slow());
  boost::asio::post(io, [] {});
  test_loop::post_slow_step(io);
  io.run();
  const auto slow = times.take_slow();
  REQUIRE(slow);
  CHECK(slow->count == 1);
  CHECK(slow->longest_us >= 11'000);
  const std::string name = common::describe_handler(slow->type);
  CAPTURE(name);
  CHECK(name.starts_with("dispatchd::test_loop::post_slow_step("));
  CHECK(name.ends_with("::{lambda()#1}"));
  CHECK_FALSE(times.take_slow());      // taken
  CHECK(times.snapshot().count == 2);  // the histogram keeps everything
}

TEST_CASE("handler timing: a function posted type-erased names its step with named_step", "[net]") {
  common::HandlerTimes times;
  boost::asio::io_context io(1);
  const common::TimeHandlers timed(times);
  // As store::Round and the channels post: through a std::function, which erases the type.
  const std::function<void(std::function<void()>)> post = [&io](std::function<void()> f) {
    boost::asio::post(io, std::move(f));
  };
  post([] { std::this_thread::sleep_for(11ms); });
  io.run();
  auto slow = times.take_slow();
  REQUIRE(slow);
  CHECK_THAT(common::describe_handler(slow->type), Catch::StartsWith("boost::asio::detail::executor_op<std::function"));

  io.restart();
  test_loop::post_named_slow_step(post);
  io.run();
  slow = times.take_slow();
  REQUIRE(slow);
  const std::string name = common::describe_handler(slow->type);
  CAPTURE(name);
  CHECK(name.starts_with("dispatchd::test_loop::post_named_slow_step("));
}

TEST_CASE("handler timing: a callback with arguments, posted back type-erased, names its step too", "[net]") {
  common::HandlerTimes times;
  boost::asio::io_context io(1);
  const common::TimeHandlers timed(times);
  test_loop::answer_slowly(io);
  io.run();
  const auto slow = times.take_slow();
  REQUIRE(slow);
  const std::string name = common::describe_handler(slow->type);
  CAPTURE(name);
  CHECK(name.starts_with("dispatchd::test_loop::answer_slowly("));
  CHECK(name.ends_with("::{lambda(int)#1}"));
}

TEST_CASE("handler timing: a step's name without dispatchd's own names, or none", "[net]") {
  CHECK(common::describe_handler(nullptr) == "an unnamed step");
  CHECK(common::describe_handler(typeid(std::vector<int>).name()) == "std::vector<int, std::allocator<int> >");
  CHECK(common::describe_handler(typeid(std::vector<int>).name(), 10) == "std::vecto...");
  CHECK(common::describe_handler("not a mangled name") == "not a mangled name");
}
