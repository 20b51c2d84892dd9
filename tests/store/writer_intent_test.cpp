#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "store/internal/writer_intent.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using store::internal::WriterIntent;

namespace {

// Polls `done` for up to five seconds.
template <typename Done>
bool eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return done();
}

}  // namespace

TEST_CASE("writer intent: an announcement is seen by every other file description, never by its own",
          "[writer_intent][sqlite]") {
  if (test::on_postgresql()) return;  // SQLite's file only
  test::TempDir dir;
  const auto db = test::migrated_db(dir);
  WriterIntent daemon(db.path()), writer(db.path()), another(db.path());
  CHECK_FALSE(daemon.others_waiting());
  writer.announce();
  CHECK(writer.announced());
  CHECK(daemon.others_waiting());
  CHECK(another.others_waiting());
  CHECK_FALSE(writer.others_waiting());  // its own lock
  another.announce();                    // two writers waiting: read locks share the byte
  writer.withdraw();
  CHECK(daemon.others_waiting());
  another.withdraw();
  CHECK_FALSE(daemon.others_waiting());
  CHECK_FALSE(writer.announced());

  WriterIntent nowhere((dir.path() / "no-such-file.db").string());  // cannot open: off, never an error
  nowhere.announce();
  CHECK_FALSE(nowhere.announced());
  CHECK_FALSE(nowhere.others_waiting());
}

TEST_CASE("writer intent: a connection without a Round announces itself while its BEGIN IMMEDIATE waits",
          "[writer_intent][sqlite]") {
  if (test::on_postgresql()) return;
  test::TempDir dir;
  auto holder = test::migrated_db(dir);
  auto waiter = test::open_db(dir);
  REQUIRE(waiter);
  WriterIntent probe(holder.path());
  REQUIRE(test::exec(holder, "BEGIN IMMEDIATE"));
  CHECK_FALSE(probe.others_waiting());  // the holder's BEGIN did not wait, and is over
  std::atomic<bool> began = false, finished = false;
  std::thread writer([&] {
    began = test::exec(*waiter, "BEGIN IMMEDIATE").has_value();  // waits on the busy timeout (5 s)
    finished = true;
  });
  CHECK(eventually([&] { return probe.others_waiting(); }));
  CHECK_FALSE(finished);
  REQUIRE(test::exec(holder, "COMMIT"));
  writer.join();
  CHECK(began);
  CHECK_FALSE(probe.others_waiting());  // withdrawn once the BEGIN returned
  REQUIRE(test::exec(*waiter, "ROLLBACK"));
}
