#pragma once
// A migrated database, a second connection to watch what is committed, and a Round whose
// posted handlers run when the test says: for tests of group commit and what is built on it.

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "store/audit.h"
#include "store/migrations.h"
#include "store/round.h"
#include "tests/store/store_fixture.h"
#include "tests/store/temp_dir.h"
#include "tests/support/raw_sql.h"
#include "tests/test_util.h"

namespace dispatchd::test {

// The event loop's queue, by hand; the syncer thread posts into it too.
struct RoundFixture {
  // `interval`: the Round's shortest time between syncs (store/round.h).
  explicit RoundFixture(std::chrono::microseconds interval = {}) {
    auto opened = test::open_db(dir);
    REQUIRE(opened);
    db.emplace(std::move(*opened));
    REQUIRE(store::migrate(*db, test::shipped_migrations(), "2026-12-01T12:00:00Z"));
    auto other = test::open_db(dir);
    REQUIRE(other);
    observer.emplace(std::move(*other));
    round.emplace(
        *db,
        [this](std::function<void()> f) {
          {
            const std::lock_guard lock(mutex);
            queue.push_back(std::move(f));
          }
          posted.notify_all();
        },
        interval);
  }
  // Runs what is queued now (the end of a loop round).
  void run_queue() {
    while (auto f = next(std::chrono::milliseconds(0))) (*f)();
  }
  // Runs handlers, waiting for more, until `done` (or fails after five seconds).
  template <typename Done>
  void run_until(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done()) {
      auto f = next(std::chrono::milliseconds(50));
      if (f) (*f)();
      REQUIRE(std::chrono::steady_clock::now() < deadline);
    }
  }
  std::optional<std::function<void()>> next(std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex);
    posted.wait_for(lock, wait, [&] { return !queue.empty(); });
    if (queue.empty()) return std::nullopt;
    auto f = std::move(queue.front());
    queue.pop_front();
    return f;
  }
  std::size_t queued() {
    const std::lock_guard lock(mutex);
    return queue.size();
  }
  long long committed_events() { return test::query_int(*observer, "SELECT count(*) FROM audit").value(); }
  store::Result<void> event(const std::string& name) {
    return test::record_named_event(*db, {"2026-12-01T12:00:01Z", name, std::nullopt, "dispatchd", "{}"});
  }

  TempDir dir;
  std::optional<store::Database> db;
  std::optional<store::Database> observer;
  std::mutex mutex;
  std::condition_variable posted;
  std::deque<std::function<void()>> queue;
  std::optional<store::Round> round;
};

}  // namespace dispatchd::test
