// Units of work (store/unit_of_work.h): which path runs, when, and how lost work is redone.
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <vector>

#include "store/audit.h"
#include "store/unit_of_work.h"
#include "tests/store/round_fixture.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

using Clock = std::chrono::steady_clock;

// A Redo on a fake monotonic clock that records the wake-ups it asks for.
struct FakeTime {
  Clock::time_point now{};
  std::vector<milliseconds> wakes;
  store::Redo::Deps deps() {
    return {[this] { return now; }, [this](milliseconds delay) { wakes.push_back(delay); }};
  }
};

// Makes every round that writes an audit event fail at its COMMIT, as a full disk does.
void fill_the_disk(store::Database& db) {
  REQUIRE(test::exec(db, "CREATE TABLE doomed (x INTEGER REFERENCES inbox (id) DEFERRABLE INITIALLY DEFERRED)"));
  REQUIRE(
      test::exec(db, test::on_postgresql()
                         ? "CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS"
                           " $$ BEGIN INSERT INTO doomed VALUES (-1); RETURN NULL; END $$;"
                           " CREATE TRIGGER disk_full AFTER INSERT ON audit FOR EACH ROW EXECUTE FUNCTION disk_full()"
                         : "CREATE TRIGGER disk_full AFTER INSERT ON audit BEGIN INSERT INTO doomed VALUES (-1); END"));
}

store::Result<void> write_event(store::Database& db, const std::string& name) {
  return test::record_named_event(db, {"2026-12-01T12:00:01Z", name, std::nullopt, "dispatchd", "{}"});
}

}  // namespace

TEST_CASE("commit_then: without a round the write is durable at once", "[unit_of_work]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  REQUIRE(write_event(db, "at once"));
  int durable = 0;
  int lost = 0;
  store::commit_then(
      db, [&] { ++durable; }, [&] { ++lost; });
  CHECK(durable == 1);  // inside commit_then
  CHECK(lost == 0);
}

TEST_CASE("commit_then: with a round exactly one path runs, once the round is answered", "[unit_of_work]") {
  test::RoundFixture f;
  const bool full = GENERATE(false, true);
  CAPTURE(full);
  if (full) fill_the_disk(*f.db);
  REQUIRE(f.event("the write"));
  int durable = 0;
  int lost = 0;
  store::commit_then(
      *f.db, [&] { ++durable; }, [&] { ++lost; });
  CHECK(durable + lost == 0);  // never inside commit_then
  f.run_until([&] { return durable + lost > 0; });
  f.run_queue();  // nothing more comes
  CHECK(durable == (full ? 0 : 1));
  CHECK(lost == (full ? 1 : 0));
  CHECK(f.committed_events() == (full ? 0 : 1));
}

TEST_CASE("Redo: one pause per failing round, growing while losses go on, until the owner's work is stored",
          "[unit_of_work]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);  // no round: a unit ended through commit_then is durable at once
  FakeTime time;
  store::Redo redo(db, {1000ms, 30'000ms}, time.deps());
  enum class Event { loss, owner_stored };
  struct Row {
    const char* what;
    milliseconds after;  // on the clock since the previous row
    Event event;
    milliseconds pause;  // then: pause()
    bool paused;         //       paused()
  };
  const Row rows[] = {
      {"the first loss pauses for `first`", 0ms, Event::loss, 1000ms, true},
      {"another loss in that pause: the same pause", 500ms, Event::loss, 1000ms, true},
      {"a loss once it ended: twice as long", 500ms, Event::loss, 2000ms, true},
      {"and again", 2000ms, Event::loss, 4000ms, true},
      {"8 s", 4000ms, Event::loss, 8000ms, true},
      {"16 s", 8000ms, Event::loss, 16'000ms, true},
      {"capped at 30 s", 16'000ms, Event::loss, 30'000ms, true},
      {"stays capped", 30'000ms, Event::loss, 30'000ms, true},
      {"the owner's work stored: the row ends, the pause running goes on", 1000ms, Event::owner_stored, 0ms, true},
      {"the pause is over", 29'000ms, Event::owner_stored, 0ms, false},
      {"a new row starts at `first`", 0ms, Event::loss, 1000ms, true},
  };
  std::vector<milliseconds> expected_wakes;
  for (const Row& row : rows) {
    CAPTURE(row.what);
    time.now += row.after;
    const auto before = redo.pause();
    const bool was_paused = redo.paused();
    if (row.event == Event::loss) redo.failed();
    if (row.event == Event::owner_stored) redo.commit_then({}, {});
    CHECK(redo.pause() == row.pause);
    CHECK(redo.paused() == row.paused);
    if (row.event == Event::loss && !was_paused) expected_wakes.push_back(row.pause);
    if (row.event == Event::loss && was_paused) CHECK(redo.pause() == before);
  }
  CHECK(time.wakes == expected_wakes);  // one wake-up per pause, with its length
}

TEST_CASE("Redo: a lost write is kept and done again after each pause until it is stored", "[unit_of_work]") {
  test::RoundFixture f;
  FakeTime time;
  store::Redo redo(*f.db, {1000ms, 30'000ms}, time.deps());
  fill_the_disk(*f.db);
  int runs = 0;
  redo.run([&](store::Database& db) {
    ++runs;
    return write_event(db, "must be stored");
  });
  f.run_until([&] { return redo.kept() == 1; });  // its round was lost
  CHECK(time.wakes == std::vector<milliseconds>{1000ms});
  redo.resume();  // still paused: nothing runs
  CHECK(runs == 1);

  time.now += 1000ms;
  redo.resume();
  CHECK(runs == 2);
  CHECK(redo.kept() == 0);  // running, its round not answered yet
  f.run_until([&] { return redo.kept() == 1; });
  CHECK(time.wakes == std::vector<milliseconds>{1000ms, 2000ms});

  REQUIRE(test::exec(
      *f.db, test::on_postgresql() ? "DROP TRIGGER disk_full ON audit" : "DROP TRIGGER disk_full"));  // space again
  time.now += 2000ms;
  redo.resume();
  f.run_until([&] { return f.committed_events() == 1 && redo.pause() == 0ms; });
  CHECK(runs == 3);
  CHECK(redo.kept() == 0);
  CHECK(test::query_int(*f.observer, "SELECT count(*) FROM audit WHERE event = 'must be stored'").value() == 1);
}

TEST_CASE("Redo: work kept with later() runs after the pause and does not end the row", "[unit_of_work]") {
  test::RoundFixture f;
  FakeTime time;
  store::Redo redo(*f.db, {1000ms, 30'000ms}, time.deps());
  int runs = 0;
  redo.later([&](store::Database& db) {
    ++runs;
    return write_event(db, "recovery");
  });
  CHECK(redo.paused());  // later() is a loss
  CHECK(redo.kept() == 1);
  redo.resume();
  CHECK(runs == 0);
  time.now += 1000ms;
  redo.resume();
  CHECK(runs == 1);
  bool durable = false;
  store::commit_then(*f.db, [&] { durable = true; }, {});
  f.run_until([&] { return durable; });
  CHECK(redo.kept() == 0);
  CHECK(redo.pause() == 1000ms);  // recovery stored, the owner's work not yet: the row goes on
  redo.failed();
  CHECK(redo.pause() == 2000ms);
}

TEST_CASE("Redo: a write that fails at once is kept when it may work later, dropped when it never will",
          "[unit_of_work]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  FakeTime time;
  store::Redo redo(db, {1000ms, 30'000ms}, time.deps());
  int refused = 0;
  redo.run([&](store::Database&) -> store::Result<void> {
    ++refused;
    return std::unexpected(store::Error::refused("the row moved on"));
  });
  CHECK(refused == 1);
  CHECK(redo.kept() == 0);
  CHECK_FALSE(redo.paused());

  int busy = 0;
  redo.run([&](store::Database&) -> store::Result<void> {
    if (++busy == 1) return std::unexpected(store::Error{store::ErrorKind::busy, "database is locked"});
    return {};
  });
  CHECK(redo.kept() == 1);
  CHECK(redo.paused());
  time.now += 1000ms;
  redo.resume();
  CHECK(busy == 2);
  CHECK(redo.kept() == 0);
  CHECK(redo.pause() == 0ms);  // stored (no round: at once), the owner's work: the row ended
}

TEST_CASE("Redo: commit_then's paths still run once the Redo is gone", "[unit_of_work]") {
  test::RoundFixture f;
  FakeTime time;
  std::optional<store::Redo> redo(std::in_place, *f.db, Backoff{1000ms, 30'000ms}, time.deps());
  REQUIRE(f.event("the write"));
  int durable = 0;
  redo->commit_then([&] { ++durable; }, {});
  redo.reset();
  f.run_until([&] { return durable == 1; });
  CHECK(durable == 1);
}
