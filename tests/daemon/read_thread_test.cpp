#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "daemon/read_ahead.h"
#include "daemon/read_thread.h"
#include "store/inbox.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"
#include "tests/support/thread_names.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

// Runs `io` until `done` or 10 s; false on the timeout.
bool run_until(boost::asio::io_context& io, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_for(5ms);
  }
  return done();
}

struct Reads {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  boost::asio::io_context io;
  std::optional<daemon::ReadThread> reads;

  explicit Reads(std::size_t max_queued = daemon::ReadThread::k_default_queue) {
    auto connection = test::open_db(dir);
    REQUIRE(connection);
    reads.emplace(io, std::move(*connection), max_queued);
  }

  // What a read of `sql` answers: the integer in the body.
  daemon::Response count(const std::string& sql) {
    std::optional<daemon::Response> answer;
    reads->run(
        [sql](store::Database& conn) {
          auto n = test::query_int(conn, sql);
          return n ? daemon::Response{200, std::to_string(*n)} : daemon::Response{500, n.error().message};
        },
        [&](daemon::Response r) { answer = std::move(r); });
    REQUIRE(run_until(io, [&] { return answer.has_value(); }));
    return *answer;
  }
};

}  // namespace

TEST_CASE("read thread: a read runs on its own thread and is answered on the loop's") {
  Reads r;
  const auto loop = std::this_thread::get_id();
  std::thread::id read_on, answered_on;
  std::optional<daemon::Response> answer;
  r.reads->run(
      [&](store::Database& conn) {
        read_on = std::this_thread::get_id();
        return daemon::Response{200, std::to_string(test::query_int(conn, "SELECT 41 + 1").value())};
      },
      [&](daemon::Response a) {
        answered_on = std::this_thread::get_id();
        answer = std::move(a);
      });
  REQUIRE(run_until(r.io, [&] { return answer.has_value(); }));
  CHECK(answer->body == "42");
  CHECK(read_on != loop);
  CHECK(answered_on == loop);
}

TEST_CASE("read thread: the thread is named staff-reads, and ends with it") {
  {
    Reads r;
    CHECK(test::thread_named_soon("staff-reads"));
  }
  CHECK(test::threads_named("staff-reads") == 0);
}

TEST_CASE("read thread: the loop keeps running while a read takes long") {
  Reads r;
  // The read waits for a timer on the loop: were it run on the loop, it would wait in vain.
  std::promise<void> gate;
  auto opened = gate.get_future().share();
  boost::asio::steady_timer timer(r.io, 20ms);
  timer.async_wait([&](const boost::system::error_code&) { gate.set_value(); });
  std::optional<daemon::Response> answer;
  r.reads->run(
      [opened](store::Database&) {
        return opened.wait_for(5s) == std::future_status::ready ? daemon::Response{200, "opened"}
                                                                : daemon::Response{504, "the loop stood still"};
      },
      [&](daemon::Response a) { answer = std::move(a); });
  REQUIRE(run_until(r.io, [&] { return answer.has_value(); }));
  CHECK(answer->status == 200);
}

TEST_CASE("read thread: reads run in order, and past the queue's bound one is refused 503 at once") {
  Reads r(2);
  std::promise<void> started, gate;
  auto opened = gate.get_future().share();
  std::vector<std::string> answers;
  const auto record = [&](daemon::Response a) { answers.push_back(std::to_string(a.status) + " " + a.body); };
  r.reads->run(
      [&started, opened](store::Database&) {
        started.set_value();
        opened.wait();
        return daemon::Response{200, "first"};
      },
      record);
  started.get_future().wait();  // taken off the queue: two more may wait
  r.reads->run([](store::Database&) { return daemon::Response{200, "second"}; }, record);
  r.reads->run([](store::Database&) { return daemon::Response{200, "third"}; }, record);
  r.reads->run([](store::Database&) { return daemon::Response{200, "fourth"}; }, record);
  REQUIRE(answers.size() == 1);  // the fourth, answered before run() returned
  CHECK(answers[0].starts_with("503 "));
  gate.set_value();
  REQUIRE(run_until(r.io, [&] { return answers.size() == 4; }));
  CHECK(answers[1] == "200 first");
  CHECK(answers[2] == "200 second");
  CHECK(answers[3] == "200 third");
}

TEST_CASE("read thread: a read that throws is answered 500, and the thread goes on") {
  Reads r;
  std::optional<daemon::Response> answer;
  r.reads->run([](store::Database&) -> daemon::Response { throw std::runtime_error("out of luck"); },
               [&](daemon::Response a) { answer = std::move(a); });
  REQUIRE(run_until(r.io, [&] { return answer.has_value(); }));
  CHECK(answer->status == 500);
  CHECK(answer->body.find("out of luck") != std::string::npos);
  CHECK(r.count("SELECT 7").body == "7");
}

TEST_CASE("read thread: its connection sees what is committed, never the loop's open transaction") {
  Reads r;
  REQUIRE(test::exec(r.db, "BEGIN"));
  REQUIRE(store::insert_inbound(r.db, {"whatsapp", "wamid.read.1", "c", "15550001", "hola", "{}"}, test::k_t0));
  CHECK(r.count("SELECT count(*) FROM inbox").body == "0");
  REQUIRE(test::exec(r.db, "COMMIT"));
  CHECK(r.count("SELECT count(*) FROM inbox").body == "1");
}

TEST_CASE("read thread: a read cut by a lost PostgreSQL connection runs again on a new one") {
  if (!test::on_postgresql()) return;  // SQLite has no connection to lose
  Reads r;
  const auto pid = r.count("SELECT pg_backend_pid()").body;
  REQUIRE(test::query_int(r.db, "SELECT CASE WHEN pg_terminate_backend(" + pid + ") THEN 1 ELSE 0 END").value() == 1);
  const auto gone = [&] {
    return test::query_int(r.db, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid).value() == 0;
  };
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!gone() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  REQUIRE(gone());
  const auto answer = r.count("SELECT count(*) FROM inbox");
  CHECK(answer.status == 200);
  CHECK(answer.body == "0");
  CHECK(r.count("SELECT pg_backend_pid()").body != pid);
}

TEST_CASE("read-ahead: the reads run on the thread, and `then` comes on the loop, never inside the call",
          "[read_thread][read_ahead]") {
  Reads r;
  REQUIRE(
      store::insert_inbound(r.db, {"whatsapp", "wamid.1", "5215510000001", "5215510000001", "hola", "{}"}, test::k_t0));
  const auto read_ahead = daemon::read_ahead_on(*r.reads, r.io, 10);
  connectors::InboundEvents keys;
  keys.messages.push_back({"whatsapp", "wamid.2", "5215510000001", "5215510000001", {}, {}, {}});
  keys.reports.push_back({"wamid.out.1", "", store::DeliveryStatus::read, ""});
  std::optional<std::int64_t> blocks;
  std::thread::id called_on;
  read_ahead(keys, [&](std::int64_t b) {
    blocks = b;
    called_on = std::this_thread::get_id();
  });
  CHECK_FALSE(blocks);
  REQUIRE(run_until(r.io, [&] { return blocks.has_value(); }));
  CHECK(called_on == std::this_thread::get_id());
}

TEST_CASE("read-ahead: with the thread's queue full nothing is read, and `then` still comes, on the loop",
          "[read_thread][read_ahead]") {
  Reads r(0);  // every read is refused at once
  const auto read_ahead = daemon::read_ahead_on(*r.reads, r.io, 10);
  std::optional<std::int64_t> blocks;
  read_ahead({}, [&](std::int64_t b) { blocks = b; });
  CHECK_FALSE(blocks);
  REQUIRE(run_until(r.io, [&] { return blocks.has_value(); }));
  CHECK(*blocks == 0);
}
