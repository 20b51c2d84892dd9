#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "store/audit.h"
#include "store/internal/access.h"
#include "store/internal/writer_intent.h"
#include "store/round.h"
#include "store/transaction.h"
#include "tests/store/round_fixture.h"
#include "tests/support/raw_sql.h"
#include "tests/support/thread_names.h"

using namespace dispatchd;

using Fixture = test::RoundFixture;

TEST_CASE("round: the store calls of one round share one commit, made when the round ends", "[round]") {
  Fixture f;
  REQUIRE(f.event("one"));
  REQUIRE(f.event("two"));
  CHECK(f.committed_events() == 0);  // still inside the round's transaction
  CHECK(f.queued() == 1);            // one commit posted, however many calls
  f.run_queue();
  CHECK(f.committed_events() == 2);
  CHECK(f.round->stats().commits == 1);
  REQUIRE(f.event("three"));  // the next round opens a new transaction
  // ... committed once the first one's sync is done (on SQLite it may wait for it).
  f.run_until([&] { return f.committed_events() == 3; });
  CHECK(f.round->stats().commits == 2);
  const auto check = store::verify_audit(*f.observer);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
}

TEST_CASE("round: its syncer and checkpointer threads are named, and end with the round", "[round][sqlite]") {
  if (test::on_postgresql()) return;  // the server syncs its own log: no threads there
  {
    Fixture f;
    CHECK(test::thread_named_soon("wal-sync"));
    CHECK(test::thread_named_soon("wal-checkpoint"));
  }
  CHECK(test::threads_named("wal-sync") == 0);
  CHECK(test::threads_named("wal-checkpoint") == 0);
}

TEST_CASE("round: after_commit runs only once the round is committed and synced", "[round]") {
  Fixture f;
  REQUIRE(f.event("acknowledged"));
  std::optional<bool> answered;
  long long visible_then = -1;
  store::after_commit(*f.db, [&](bool durable) {
    answered = durable;
    visible_then = f.committed_events();
  });
  CHECK_FALSE(answered.has_value());
  f.run_until([&] { return answered.has_value(); });
  CHECK(*answered);
  CHECK(visible_then == 1);  // the effect saw the committed row
  // Its wait is counted, from after_commit to the answer.
  const auto waits = f.round->stats().durable_waits;
  CHECK(waits.count == 1);
  CHECK(waits.at_most.back() == 1);  // within a second
  CHECK(waits.sum_us == waits.max_us);
  // SQLite: our syncer's fdatasync, each timed; PostgreSQL: the server's, at COMMIT (none
  // counted here).
  const auto stats = f.round->stats();
  CHECK(stats.sync_times.count == stats.syncs);
  if (!test::on_postgresql()) {
    CHECK(stats.syncs >= 1);
    CHECK(stats.sync_times.at_most.back() == stats.syncs);  // within a second
    CHECK(stats.sync_times.max_us <= waits.max_us);         // the sync is part of the wait
  }
}

TEST_CASE("round: before_commit runs inside the round before its COMMIT, whose sync answers what it wrote", "[round]") {
  Fixture f;
  REQUIRE(f.event("decision"));
  std::vector<std::string> heard;
  std::optional<bool> mark_durable;
  REQUIRE(store::before_commit(*f.db, [&] {
    heard.push_back("first, committed rows " + std::to_string(f.committed_events()));
    REQUIRE(f.event("sending mark"));  // a savepoint in the open round
    store::after_commit(*f.db, [&](bool durable) { mark_durable = durable; });
    // One registered by a hook runs before the same COMMIT.
    REQUIRE(store::before_commit(*f.db, [&] { heard.push_back("second"); }));
  }));
  CHECK(heard.empty());  // not before the round commits
  f.run_queue();         // the posted commit: both hooks, then one COMMIT
  CHECK(heard == std::vector<std::string>{"first, committed rows 0", "second"});
  CHECK(f.committed_events() == 2);
  CHECK(f.round->stats().commits == 1);
  f.run_until([&] { return mark_durable.has_value(); });
  CHECK(*mark_durable);
  CHECK(f.round->stats().commits == 1);  // the mark needed no round of its own
}

TEST_CASE("round: a failed COMMIT takes back what a before_commit hook wrote, and tells its waiters", "[round]") {
  Fixture f;
  // A deferred constraint fails at COMMIT, the way a full disk would.
  REQUIRE(
      test::exec(*f.db, "CREATE TABLE deferred_check (x INTEGER REFERENCES inbox (id) DEFERRABLE INITIALLY DEFERRED)"));
  REQUIRE(f.event("decision"));
  std::optional<bool> mark_durable;
  REQUIRE(store::before_commit(*f.db, [&] {
    REQUIRE(f.event("sending mark"));
    REQUIRE(
        store::transaction<void>(*f.db, [&] { return test::exec(*f.db, "INSERT INTO deferred_check VALUES (999)"); }));
    store::after_commit(*f.db, [&](bool durable) { mark_durable = durable; });
  }));
  f.run_until([&] { return mark_durable.has_value(); });
  CHECK_FALSE(*mark_durable);
  CHECK(f.committed_events() == 0);  // neither the decision nor the mark
  CHECK(f.round->stats().failed_commits == 1);
  CHECK_FALSE(f.db->in_transaction());
}

TEST_CASE("round: before_commit runs for every way a round commits, once, and is refused without a round", "[round]") {
  Fixture f;
  int ran = 0;
  REQUIRE(store::before_commit(*f.db, [&] { ++ran; }));  // opens a round
  f.round->commit();
  CHECK(ran == 1);
  f.run_queue();  // the posted commit finds nothing to do
  CHECK(ran == 1);
  REQUIRE(f.event("at shutdown"));
  REQUIRE(store::before_commit(*f.db, [&] {
    ++ran;
    REQUIRE(f.event("written by the hook at shutdown"));
  }));
  f.round.reset();
  CHECK(ran == 2);
  CHECK(f.committed_events() == 2);
  CHECK_FALSE(store::before_commit(*f.db, [&] { ++ran; }));  // no round: each write commits by itself
  CHECK(ran == 2);
}

TEST_CASE("round: one sync may cover several commits, and every waiter is answered in order", "[round]") {
  Fixture f;
  std::vector<int> order;
  for (int i = 0; i < 20; ++i) {
    REQUIRE(f.event("burst"));
    store::after_commit(*f.db, [&order, i](bool durable) {
      CHECK(durable);
      order.push_back(i);
    });
    f.round->commit();  // a round each, faster than the syncer thread can follow
  }
  f.run_until([&] { return order.size() == 20; });
  for (int i = 0; i < 20; ++i) CHECK(order[static_cast<std::size_t>(i)] == i);
  CHECK(f.round->stats().commits == 20);
  CHECK(f.round->stats().syncs <= 20);
  CHECK(f.committed_events() == 20);
}

TEST_CASE("round: rounds made while a sync runs share the next commit, with an interval, until it has passed",
          "[round][sqlite]") {
  if (test::on_postgresql()) return;  // the server syncs at COMMIT: no syncer to wait for
  // An interval far longer than any sync here: every round made within it waits for it.
  Fixture f(std::chrono::milliseconds(300));
  REQUIRE(f.event("first"));
  f.run_queue();  // commits at once: nothing was synced before
  CHECK(f.round->stats().commits == 1);
  CHECK(f.committed_events() == 1);
  int answered = 0;
  const auto began = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) {
    REQUIRE(f.event("meanwhile"));
    store::after_commit(*f.db, [&](bool durable) {
      CHECK(durable);
      ++answered;
    });
    f.run_queue();  // the end of a loop round: its posted commit finds the syncer busy
  }
  CHECK(f.round->stats().commits == 1);
  CHECK(f.committed_events() == 1);
  f.run_until([&] { return answered == 5; });
  CHECK(std::chrono::steady_clock::now() - began >= std::chrono::milliseconds(250));
  CHECK(f.round->stats().commits == 2);  // five loop rounds, one COMMIT
  CHECK(f.committed_events() == 6);
}

TEST_CASE("round: while another process's writer waits, a round is committed at once, not kept open",
          "[round][sqlite]") {
  if (test::on_postgresql()) return;  // no interval there: nothing is kept open
  Fixture f(std::chrono::milliseconds(300));
  REQUIRE(f.event("first"));
  f.run_queue();  // committed; the next 300 ms are the syncer's cool-down
  store::internal::WriterIntent writer(f.db->path());
  writer.announce();  // as dispatchctl's BEGIN IMMEDIATE does while it waits
  for (int i = 0; i < 3; ++i) {
    REQUIRE(f.event("while a writer waits"));
    f.run_queue();
    CHECK(f.round->stats().commits == 2 + i);  // each round committed at its end
  }
  CHECK(f.round->stats().commits_for_writers == 3);
  writer.withdraw();
  REQUIRE(f.event("after"));
  f.run_queue();
  CHECK(f.round->stats().commits == 4);  // kept open again until the cool-down ends
  f.run_until([&] { return f.round->stats().commits == 5; });
  CHECK(f.committed_events() == 5);
}

TEST_CASE("round: a failing call undoes only its own changes, the round goes on", "[round]") {
  Fixture f;
  REQUIRE(f.event("kept"));
  auto failed = store::transaction<void>(*f.db, [&]() -> store::Result<void> {
    if (auto ok = f.event("undone"); !ok) return ok;
    return std::unexpected(store::Error::refused("refused after writing"));
  });
  CHECK_FALSE(failed);
  REQUIRE(f.event("kept too"));
  f.run_queue();
  CHECK(f.committed_events() == 2);
  CHECK(test::query_int(*f.observer, "SELECT count(*) FROM audit WHERE event = 'undone'").value() == 0);
}

TEST_CASE("round: a failed commit rolls the round back and tells every waiter", "[round]") {
  Fixture f;
  // A deferred constraint fails at COMMIT, the way a full disk would.
  REQUIRE(
      test::exec(*f.db, "CREATE TABLE deferred_check (x INTEGER REFERENCES inbox (id) DEFERRABLE INITIALLY DEFERRED)"));
  std::vector<std::pair<bool, std::string>> watched;
  f.round->watch([&](bool ok, const std::string& why) { watched.emplace_back(ok, why); });
  REQUIRE(f.event("lost"));
  REQUIRE(
      store::transaction<void>(*f.db, [&] { return test::exec(*f.db, "INSERT INTO deferred_check VALUES (999)"); }));
  std::vector<bool> waiters;
  store::after_commit(*f.db, [&](bool durable) { waiters.push_back(durable); });
  store::after_commit(*f.db, [&](bool durable) { waiters.push_back(durable); });
  f.run_until([&] { return waiters.size() == 2; });
  CHECK(waiters == std::vector<bool>{false, false});
  CHECK(f.round->stats().failed_commits == 1);
  CHECK(f.round->stats().durable_waits.count == 2);  // answered, if not durable
  CHECK(f.committed_events() == 0);
  CHECK_FALSE(f.db->in_transaction());
  REQUIRE(watched.size() == 1);
  CHECK_FALSE(watched[0].first);
  CHECK_THAT(watched[0].second,
             Catch::StartsWith("COMMIT: ") && Catch::Contains("foreign key constraint", Catch::CaseSensitive::No));
  // A round that changes nothing commits even on a full disk: it tells nothing.
  REQUIRE(f.round->open());
  f.round->commit();
  CHECK(watched.size() == 1);
  REQUIRE(f.event("next round"));  // the connection is usable again
  std::optional<bool> durable;
  store::after_commit(*f.db, [&](bool ok) { durable = ok; });
  f.run_until([&] { return durable.has_value(); });
  CHECK(*durable);
  CHECK(f.committed_events() == 1);
  // Told once that rounds are durable again, not for every round after.
  REQUIRE(watched.size() == 2);
  CHECK(watched[1] == std::pair<bool, std::string>{true, ""});
  REQUIRE(f.event("and another"));
  durable.reset();
  store::after_commit(*f.db, [&](bool ok) { durable = ok; });
  f.run_until([&] { return durable.has_value(); });
  CHECK(watched.size() == 2);
}

TEST_CASE("round: nothing reaches the disk before the COMMIT, however much the round changes", "[round][sqlite]") {
  Fixture f;
  REQUIRE(f.event("first"));
  f.run_queue();
  const auto wal = f.dir.file("d.db-wal");
  const auto before = std::filesystem::file_size(wal);
  // A cache of 10 pages and a round that changes hundreds: SQLite would spill them into the
  // WAL mid-transaction, where a full disk fails the statement instead of the COMMIT.
  REQUIRE(test::exec(*f.db, "PRAGMA cache_size=10"));
  for (int i = 0; i < 500; ++i) REQUIRE(f.event("event " + std::to_string(i) + std::string(200, 'x')));
  CHECK(std::filesystem::file_size(wal) == before);
  // The round's end (once the first round's sync is answered).
  f.run_until([&] { return f.committed_events() == 501; });
  CHECK(std::filesystem::file_size(wal) > before);
}

TEST_CASE("round: destroying the round commits what is open and answers every waiter", "[round]") {
  Fixture f;
  REQUIRE(f.event("at shutdown"));
  std::optional<bool> answered;
  store::after_commit(*f.db, [&](bool durable) { answered = durable; });
  f.round.reset();
  CHECK(f.committed_events() == 1);
  REQUIRE(answered.has_value());
  CHECK(*answered);
  CHECK(store::internal::Access::round(*f.db) == nullptr);
  REQUIRE(f.event("after"));  // plain transactions again
  CHECK(f.committed_events() == 2);
}

TEST_CASE("round: a commit posted before the round was destroyed does nothing", "[round]") {
  Fixture f;
  REQUIRE(f.event("committed by the destructor"));
  f.round.reset();
  f.run_queue();  // the posted commit and sync results find no round
  CHECK(f.committed_events() == 1);
}

TEST_CASE("round: the syncer thread checkpoints a grown WAL, off the loop", "[round][sqlite]") {
  Fixture f;
  const std::string detail = "{\"pad\":\"" + std::string(16 * 1024, 'x') + "\"}";
  bool synced = false;
  for (int i = 0; i < 400 && f.round->stats().checkpoints == 0; ++i) {
    REQUIRE(test::record_named_event(*f.db, {"2026-12-01T12:00:01Z", "padding", std::nullopt, "dispatchd", detail}));
    synced = false;
    store::after_commit(*f.db, [&](bool durable) { synced = durable; });
    f.round->commit();
    f.run_until([&] { return synced; });
  }
  CHECK(f.round->stats().checkpoints >= 1);
  CHECK(test::query_int(*f.db, "PRAGMA wal_autocheckpoint").value() == 0);  // SQLite's own is off meanwhile
  f.round.reset();
  CHECK(test::query_int(*f.db, "PRAGMA wal_autocheckpoint").value() == 1000);
  const auto check = store::verify_audit(*f.observer);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
}

TEST_CASE("round: the WAL is checkpointed per 1000 pages written, not after every sync once it has grown",
          "[round][sqlite]") {
  // SQLite starts the WAL file over after a checkpoint without shrinking it: the file's size
  // stays above the threshold, the number of pages in it does not.
  Fixture f;
  const std::string detail = "{\"pad\":\"" + std::string(16 * 1024, 'x') + "\"}";
  constexpr int k_commits = 600;  // about 6 pages each: a few thousand pages in all
  for (int i = 0; i < k_commits; ++i) {
    REQUIRE(test::record_named_event(*f.db, {"2026-12-01T12:00:01Z", "padding", std::nullopt, "dispatchd", detail}));
    bool synced = false;
    store::after_commit(*f.db, [&](bool durable) { synced = durable; });
    f.round->commit();
    f.run_until([&] { return synced; });
  }
  const auto stats = f.round->stats();
  CHECK(stats.syncs == k_commits);
  CHECK(stats.checkpoints >= 2);
  CHECK(stats.checkpoints <= 10);
  CHECK(f.committed_events() == k_commits);
}

TEST_CASE("round: under commits that never pause the WAL still starts over", "[round][sqlite]") {
  // Rounds one after the other, the next one open before the checkpoint thread has copied
  // the last: SQLite alone would append to the WAL for as long as they come.
  Fixture f;
  const std::string detail = "{\"pad\":\"" + std::string(16 * 1024, 'x') + "\"}";
  int synced = 0;
  int most = 0;
  int restarts = 0;
  int last = 0;
  int written = 0;
  while (restarts < 2 && written < 20000) {
    REQUIRE(test::record_named_event(*f.db, {"2026-12-01T12:00:01Z", "padding", std::nullopt, "dispatchd", detail}));
    store::after_commit(*f.db, [&](bool durable) { synced += durable ? 1 : 0; });
    f.round->commit();
    ++written;
    f.run_queue();
    const auto pages = static_cast<int>(f.round->stats().wal_pages);
    most = std::max(most, pages);
    if (pages < last) ++restarts;
    last = pages;
  }
  f.run_until([&] { return synced == written; });
  INFO("written " << written << ", most pages " << most << ", checkpoints " << f.round->stats().checkpoints);
  CHECK(restarts == 2);
  // How far past 16 MiB the WAL grows depends on how soon the checkpoint thread gets a CPU
  // (about 8,000 pages on an idle machine, every page written under a load of 13): shown,
  // not asserted.
  CHECK(f.committed_events() == written);
}

TEST_CASE("round: after steady commits the WAL starts over once they pause", "[round][sqlite]") {
  // Commits keep coming while the syncer checkpoints, so no checkpoint copies the whole WAL
  // before the next write; without a checkpoint at the pause the WAL would never start over.
  Fixture f;
  const std::string detail = "{\"pad\":\"" + std::string(16 * 1024, 'x') + "\"}";
  constexpr int k_burst = 1500;  // about 7 pages each: several checkpoints' worth
  int synced = 0;
  int written = 0;
  // The WAL may start over during the burst as well (past 16 MiB the loop copies the rest
  // itself once the checkpoint thread has caught up): the burst goes on until the WAL holds
  // more than the 1000 pages that make a pause's checkpoint due.
  while (written < k_burst || f.round->stats().wal_pages <= 1000) {
    REQUIRE(written < 20 * k_burst);
    REQUIRE(test::record_named_event(*f.db, {"2026-12-01T12:00:01Z", "padding", std::nullopt, "dispatchd", detail}));
    store::after_commit(*f.db, [&](bool durable) { synced += durable ? 1 : 0; });
    f.round->commit();
    ++written;
    f.run_queue();
  }
  f.run_until([&] { return synced == written; });
  const auto burst = f.round->stats();
  REQUIRE(burst.wal_pages > 1000);
  // The pause (several times the syncer's 50 ms): it copies the last pages...
  const auto paused = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  f.run_until([&] { return std::chrono::steady_clock::now() > paused; });
  // ...and the next write starts the WAL over.
  REQUIRE(test::record_named_event(*f.db, {"2026-12-01T12:00:02Z", "padding", std::nullopt, "dispatchd", detail}));
  bool done = false;
  store::after_commit(*f.db, [&](bool durable) { done = durable; });
  f.round->commit();
  f.run_until([&] { return done; });
  INFO("pages in the WAL after the burst " << burst.wal_pages << ", checkpoints " << burst.checkpoints);
  CHECK(f.round->stats().wal_pages < 100);
  CHECK(f.committed_events() == written + 1);
}
