#include <catch2/catch.hpp>

#include <set>

#include "store/attempts.h"
#include "store/audit_digest.h"
#include "store/desk.h"
#include "store/outbox.h"
#include "store/queue.h"
#include "store/tools/archive.h"
#include "tests/store/media_fixture.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

const store::Time k_day1 = std::chrono::sys_days{std::chrono::November / 1 / 2026} + 9h;
const store::Time k_day2 = k_day1 + 24h;
const store::Time k_day3 = k_day1 + 48h;

// Writes messages the way dispatchd does, one kind per call; each returns the message id.
class History {
 public:
  explicit History(store::Database& db) : m_db(db) {}

  // Answered and sent: an attempt, an action (the outbox row), delivered.
  std::int64_t replied(store::Time at) {
    const auto id = take(at);
    store::AttemptRecord attempt{.message_id = id, .attempt = 1, .provider = "openai", .model = "m"};
    attempt.raw_output = "{}";
    REQUIRE(store::record_attempt(m_db, attempt, at + 1s));
    REQUIRE(store::add_action(m_db, reply(id), at + 2s));
    send(at + 3s);
    REQUIRE(store::finish(m_db, id, store::Outcome::replied, at + 4s));
    return id;
  }
  // Escalated; staff dismissed it (closed = true) or it waits (open).
  std::int64_t escalated(store::Time at, bool closed) {
    const auto id = take(at);
    auto e = store::open_escalation(m_db, {id, store::EscalationReason::model_escalated, "{}", {}, {}}, at + 1s);
    REQUIRE(e);
    REQUIRE(store::finish(m_db, id, store::Outcome::escalated, at + 2s));
    if (closed) {
      REQUIRE(store::close_escalation(m_db, *e, "ana", store::EscalationStatus::dismissed, "spam", at + 3s));
      REQUIRE(store::add_note(m_db, *e, "luis", "agreed: spam", at + 4s));
    }
    return id;
  }
  // Escalated, and staff's reply is approved but not sent yet (a Gmail message: send()
  // sends WhatsApp's only).
  std::int64_t in_flight(store::Time at) {
    const auto id = take(at, "gmail");
    auto e = store::open_escalation(m_db, {id, store::EscalationReason::model_escalated, "{}", {}, {}}, at + 1s);
    REQUIRE(e);
    REQUIRE(store::finish(m_db, id, store::Outcome::escalated, at + 2s));
    REQUIRE(store::resolve_with_action(m_db, *e, "ana", reply(id), store::Resolution::replied, at + 3s));
    return id;
  }
  // Everything at once, as the newest message: an attempt, an escalation resolved by a
  // staff reply with a note, sent. It holds each table's newest row (which always stays live).
  std::int64_t everything(store::Time at) {
    const auto id = take(at);
    store::AttemptRecord attempt{.message_id = id, .attempt = 1, .provider = "openai", .model = "m"};
    REQUIRE(store::record_attempt(m_db, attempt, at + 1s));
    auto e = store::open_escalation(m_db, {id, store::EscalationReason::model_escalated, "{}", {}, {}}, at + 1s);
    REQUIRE(e);
    REQUIRE(store::finish(m_db, id, store::Outcome::escalated, at + 2s));
    REQUIRE(store::resolve_with_action(m_db, *e, "ana", reply(id), store::Resolution::replied, at + 3s));
    REQUIRE(store::add_note(m_db, *e, "ana", "replied by phone too", at + 3s));
    send(at + 4s);
    return id;
  }
  // Taken by a worker, not finished.
  std::int64_t pending(store::Time at) { return take(at); }

  void send(store::Time at) {
    auto item = store::begin_send(m_db, at, "whatsapp");
    REQUIRE(item);
    REQUIRE(*item);
    REQUIRE(store::complete_send(m_db, (*item)->id, "out." + std::to_string((*item)->id), at + 1s));
  }

 private:
  std::int64_t take(store::Time at, const std::string& channel = "whatsapp") {
    const std::string who = "1555000" + std::to_string(++m_n);
    auto inserted = store::insert_inbound(m_db, {channel, "id." + who, who, who, "hi " + who, "{}"}, at);
    REQUIRE(inserted);
    auto taken = store::take_next(m_db, "w", at, std::chrono::seconds(24h * 365));
    REQUIRE(taken);
    REQUIRE(*taken);
    REQUIRE((*taken)->id == inserted->id);
    return inserted->id;
  }
  static store::NewAction reply(std::int64_t id) {
    return {.message_id = id, .action = "send_message", .arguments = "{}", .recipient = "x", .body = "ok"};
  }

  store::Database& m_db;
  int m_n = 0;
};

// The archive is a SQLite file on both backends: SQLite's migrations make it.
std::vector<store::Migration> sqlite_migrations() {
  auto migrations = store::load_migrations(test::source_path("migrations"), store::Backend::sqlite);
  REQUIRE(migrations);
  return std::move(*migrations);
}

store::ArchiveOptions options(const std::string& before, std::size_t batch = 500) {
  store::ArchiveOptions o;
  o.before = before;
  o.batch_messages = batch;
  o.migrations = sqlite_migrations();
  o.now = "2026-12-01T00:00:00Z";
  return o;
}

std::set<std::int64_t> ids(store::Database& db, const std::string& sql) {
  std::set<std::int64_t> out;
  const auto n = test::query_int(db, "SELECT count(*) FROM (" + sql + ") AS s");
  REQUIRE(n);
  for (long long i = 0; i < *n; ++i) {
    const auto id = test::query_int(db, sql + " ORDER BY 1 LIMIT 1 OFFSET " + std::to_string(i));
    REQUIRE(id);
    out.insert(*id);
  }
  return out;
}

std::set<std::int64_t> messages(store::Database& db) { return ids(db, "SELECT message_id FROM v_messages"); }

store::Database open_archive_test_db(const std::string& path) {
  auto db = store::Database::open(path, store::Database::Mode::existing);
  REQUIRE(db);
  return std::move(*db);
}

void require_chains(store::Database& live, store::Database& archive, store::ArchiveLink link) {
  const auto check = store::verify_audit(live);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
  const auto joined = store::verify_audit_archive(live, archive);
  REQUIRE(joined);
  CHECK_FALSE(joined->archive.first_broken);
  CHECK(joined->link == link);
}

}  // namespace

TEST_CASE("archive: moves the finished messages before the day, with their rows, and the chain verifies",
          "[store][archive]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  History h(db);
  const auto a = h.replied(k_day1);
  const auto b = h.escalated(k_day1 + 1h, true);
  const auto c = h.replied(k_day2);
  const auto d = h.everything(k_day3);  // received on the day: stays
  const auto before = messages(db);
  const auto events = test::query_int(db, "SELECT count(*) FROM audit").value();

  const auto result = store::archive_before(db, dir.file("a.db"), options("2026-11-03"));
  REQUIRE(result);
  CHECK(result->moved.messages == 3);
  CHECK(result->stop_reason == store::HoldReason::too_recent);
  CHECK(result->stopped_at == d);
  CHECK(result->held_back == 0);
  CHECK(messages(db) == std::set<std::int64_t>{d});
  auto archive = open_archive_test_db(dir.file("a.db"));
  CHECK(messages(archive) == std::set<std::int64_t>{a, b, c});
  // Every row of the moved messages went along, and nothing stayed behind.
  for (const char* view : {"v_attempts", "v_actions", "v_escalations", "v_notes", "v_audit"}) {
    const std::string in_live = std::string("SELECT count(*) FROM ") + view + " WHERE message_id IN (" +
                                std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c) + ")";
    CHECK(test::query_int(db, in_live).value() == 0);
    CHECK(test::query_int(archive, in_live).value() > 0);
  }
  CHECK(test::query_int(db, "SELECT count(*) FROM audit").value() +
            test::query_int(archive, "SELECT count(*) FROM audit").value() ==
        events);
  CHECK(result->moved.audit_events == test::query_int(archive, "SELECT count(*) FROM audit").value());
  require_chains(db, archive, store::ArchiveLink::linked);
  const auto anchor = store::audit_anchor(db);
  REQUIRE(anchor);
  REQUIRE(*anchor);
  CHECK((*anchor)->last_id == test::query_int(archive, "SELECT max(id) FROM audit").value());

  SECTION("the live chain goes on from the anchor, and a trail segment verifies from it") {
    const auto e = h.everything(k_day3 + 1h);
    CHECK(test::query_int(db, "SELECT min(id) FROM audit").value() == (*anchor)->last_id + 1);
    const auto check = store::verify_audit(db);
    REQUIRE(check);
    CHECK_FALSE(check->first_broken);
    const auto first = test::query_int(db, "SELECT min(id) FROM audit").value();
    const auto range = store::verify_audit_range(db, first, first + 2);
    REQUIRE(range);
    CHECK_FALSE(range->first_broken);
    CHECK(e > d);
  }
  SECTION("appending to the archive: a later run continues the same file") {
    h.everything(k_day3 + 2h);  // newer than d, so d no longer holds a newest row
    const auto again = store::archive_before(db, dir.file("a.db"), options("2026-11-04"));
    REQUIRE(again);
    CHECK(again->moved.messages == 1);  // d; the newest message stays
    CHECK(again->stop_reason == store::HoldReason::newest_row);
    CHECK(messages(archive) == std::set<std::int64_t>{a, b, c, d});
    CHECK(messages(archive).size() + messages(db).size() == before.size() + 1);
    require_chains(db, archive, store::ArchiveLink::linked);
  }
  SECTION("tampering with an archived event is detected") {
    REQUIRE(test::exec(archive, "DELETE FROM audit WHERE id = 3"));
    const auto joined = store::verify_audit_archive(db, archive);
    REQUIRE(joined);
    CHECK(joined->archive.first_broken == 4);
  }
  SECTION("deleting the first live events after the anchor is detected") {
    h.everything(k_day3 + 3h);
    REQUIRE(test::exec(db, "DELETE FROM audit WHERE id = (SELECT min(id) FROM audit)"));
    const auto check = store::verify_audit(db);
    REQUIRE(check);
    CHECK(check->first_broken);
  }
  SECTION("an archive file that does not end at the live anchor is refused") {
    test::TempDir other;
    // Another database's file, which that database could have archived into.
    auto second = store::Database::open(other.file("d.db")).value();
    REQUIRE(store::migrate(second, sqlite_migrations(), store::format_time(test::k_t0)));
    History other_history(second);
    other_history.replied(k_day1);
    other_history.replied(k_day1 + 1h);
    const auto refused = store::archive_before(db, other.file("d.db"), options("2026-11-04"));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == store::ErrorKind::refused);
  }
  SECTION("a new archive file starts at the live anchor") {
    h.everything(k_day3 + 4h);
    const auto next = store::archive_before(db, dir.file("b.db"), options("2026-11-04"));
    REQUIRE(next);
    CHECK(next->moved.messages == 1);
    auto b_file = open_archive_test_db(dir.file("b.db"));
    require_chains(db, b_file, store::ArchiveLink::linked);
    const auto start = store::audit_anchor(b_file);
    REQUIRE(start);
    REQUIRE(*start);
    CHECK((*start)->last_id == (*anchor)->last_id);
    // The first archive no longer ends where the live chain starts.
    const auto joined = store::verify_audit_archive(db, archive);
    REQUIRE(joined);
    CHECK(joined->link == store::ArchiveLink::unlinked);
  }
}

TEST_CASE("archive: pending, open escalations and sends in flight stay, and hold back what comes after them",
          "[store][archive]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  History h(db);
  const auto first = h.replied(k_day1);
  std::int64_t held = 0;
  store::HoldReason reason{};
  SECTION("pending") {
    held = h.pending(k_day1 + 1h);
    reason = store::HoldReason::pending;
  }
  SECTION("an open escalation") {
    held = h.escalated(k_day1 + 1h, false);
    reason = store::HoldReason::open_escalation;
  }
  SECTION("a send in flight") {
    held = h.in_flight(k_day1 + 1h);
    reason = store::HoldReason::send_in_flight;
  }
  const auto later = h.replied(k_day1 + 2h);
  h.everything(k_day3);  // the newest rows, after the day
  const auto result = store::archive_before(db, dir.file("a.db"), options("2026-11-02"));
  REQUIRE(result);
  CHECK(result->moved.messages == 1);
  CHECK(result->stopped_at == held);
  CHECK(result->stop_reason == reason);
  CHECK(result->held_back == 1);  // `later`: finished, but its events follow the held message's
  auto archive = open_archive_test_db(dir.file("a.db"));
  CHECK(messages(archive) == std::set<std::int64_t>{first});
  CHECK(messages(db).contains(held));
  CHECK(messages(db).contains(later));
  require_chains(db, archive, store::ArchiveLink::linked);
}

TEST_CASE("archive: a finished message whose events straddle a held one's first event stays", "[store][archive]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  History h(db);
  const auto first = h.replied(k_day1);
  // `second` is escalated; a message arrives and waits; then staff close `second`.
  const auto second = h.escalated(k_day1 + 1h, false);
  const auto waiting = h.pending(k_day1 + 2h);
  const auto escalation =
      test::query_int(db, "SELECT escalation_id FROM v_escalations WHERE message_id = " + std::to_string(second));
  REQUIRE(escalation);
  REQUIRE(store::close_escalation(db, *escalation, "ana", store::EscalationStatus::dismissed, "no", k_day1 + 3h));
  h.everything(k_day3);
  const auto result = store::archive_before(db, dir.file("a.db"), options("2026-11-02"));
  REQUIRE(result);
  CHECK(result->moved.messages == 1);
  CHECK(result->stopped_at == waiting);
  CHECK(result->held_back == 1);
  auto archive = open_archive_test_db(dir.file("a.db"));
  CHECK(messages(archive) == std::set<std::int64_t>{first});
  CHECK(messages(db).contains(second));
  require_chains(db, archive, store::ArchiveLink::linked);
}

TEST_CASE("archive: small batches give the same result as one", "[store][archive]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  History h(db);
  std::set<std::int64_t> old;
  for (int i = 0; i < 25; ++i)
    old.insert(i % 5 == 0 ? h.escalated(k_day1 + i * 1min, true) : h.replied(k_day1 + i * 1min));
  h.everything(k_day3);
  int batches = 0;
  auto o = options("2026-11-02", 3);
  o.after_batch = [&](const store::ArchiveProgress&) { ++batches; };
  const auto result = store::archive_before(db, dir.file("a.db"), o);
  REQUIRE(result);
  CHECK(batches == 9);  // 25 messages, 3 a batch
  CHECK(result->moved.messages == 25);
  auto archive = open_archive_test_db(dir.file("a.db"));
  CHECK(messages(archive) == old);
  require_chains(db, archive, store::ArchiveLink::linked);
}

TEST_CASE("archive: a run interrupted between the archive commit and the live delete is finished by the next",
          "[store][archive]") {
  test::TempDir dir;
  std::set<std::int64_t> old;
  {
    auto db = test::migrated_db(dir);
    History h(db);
    for (int i = 0; i < 6; ++i) old.insert(h.replied(k_day1 + i * 1min));
    h.everything(k_day3);
  }
  // The live database as it was before the run: with the archive written, it is the state a
  // crash right after the archive's commit leaves.
  test::TempDir before;
  test::copy_db(dir, before);
  {
    auto db = test::open_db(dir, store::Database::Mode::existing);
    REQUIRE(db);
    REQUIRE(store::archive_before(*db, dir.file("a.db"), options("2026-11-02")));
  }
  auto restored = test::open_db(before, store::Database::Mode::existing).value();
  {
    auto archive = open_archive_test_db(dir.file("a.db"));
    const auto joined = store::verify_audit_archive(restored, archive);
    REQUIRE(joined);
    CHECK(joined->link == store::ArchiveLink::overlap);
  }
  SECTION("unchanged rows: deleted from live") {
    const auto next = store::archive_before(restored, dir.file("a.db"), options("2026-11-02"));
    REQUIRE(next);
    CHECK(next->recovered_messages == 6);
    CHECK(next->moved.messages == 0);
    auto archive = open_archive_test_db(dir.file("a.db"));
    CHECK(messages(archive) == old);
    CHECK(messages(restored).size() == 1);
    require_chains(restored, archive, store::ArchiveLink::linked);
  }
  SECTION("changed since (a delivery report): the copy is taken back, then archived again") {
    const auto action = test::query_int(restored, "SELECT min(action_id) FROM v_actions");
    REQUIRE(action);
    REQUIRE(store::apply_delivery(restored, {"out." + std::to_string(*action), "", store::DeliveryStatus::read, ""},
                                  k_day3 + 1h));
    const auto next = store::archive_before(restored, dir.file("a.db"), options("2026-11-02"));
    REQUIRE(next);
    CHECK(next->undone_messages == 6);
    CHECK(next->recovered_messages == 0);
    // The read receipt's event comes after the newest message's first event: the first
    // message now ends after it, and so nothing can move this time.
    CHECK(next->moved.messages == 0);
    auto archive = open_archive_test_db(dir.file("a.db"));
    CHECK(messages(archive).empty());
    CHECK(messages(restored).size() == 7);
    require_chains(restored, archive, store::ArchiveLink::empty);
  }
}

TEST_CASE("archive: a file begun before 0013 (legacy hashes) is appended to after the live database moved to 0013",
          "[store][archive]") {
  test::TempDir dir;
  // The live database as a binary before 0013 wrote it: four events hashed by the old formula
  // (the writers of today need 0013's columns, so the rows are written here).
  auto db = test::open_db(dir).value();
  {
    auto before_0013 = test::shipped_migrations();
    std::erase_if(before_0013, [](const store::Migration& m) { return m.version >= 13; });
    REQUIRE(store::migrate(db, before_0013, store::format_time(k_day1)));
  }
  std::string head = store::k_audit_genesis;
  for (int id = 1; id <= 4; ++id) {
    const store::AuditRecord event{store::format_time((id < 4 ? k_day1 : k_day2) + id * 1min), "config_reload",
                                   std::nullopt, "dispatchd", R"({"n":)" + std::to_string(id) + "}"};
    const auto hash = store::legacy_row_hash(head, id, event);
    REQUIRE(test::exec(db, "INSERT INTO audit (id, at, event, message_id, actor, detail, prev_hash, hash) VALUES (" +
                               std::to_string(id) + ", '" + event.at + "', '" + event.event + "', NULL, '" +
                               event.actor + "', '" + event.detail + "', '" + head + "', '" + hash + "')"));
    head = hash;
  }
  // Rows given their ids: PostgreSQL's identity must be moved past them (0001's header).
  if (test::on_postgresql()) REQUIRE(test::exec(db, "SELECT setval(pg_get_serial_sequence('audit', 'id'), 4)"));
  REQUIRE(store::schema_version(db).value() == 12);

  // The first run, still before 0013: the archive file is created at version 12 and takes
  // the three events of day 1; the fourth (day 2) stays live.
  const auto first = store::archive_before(db, dir.file("a.db"), options("2026-11-02"));
  REQUIRE(first);
  CHECK(first->moved.audit_events == 3);
  {
    auto archive = open_archive_test_db(dir.file("a.db"));
    CHECK(store::schema_version(archive).value() == 12);
    require_chains(db, archive, store::ArchiveLink::linked);
  }

  // The live database moves to 0013: its one legacy row is re-hashed (keeping its link to
  // the anchor, the archive's last legacy hash) and chain_migrated follows; then the daemon
  // goes on writing messages, hashed through salted digests.
  test::migrate_all(db, k_day2 + 1h);
  CHECK(test::query_int(db, "SELECT count(*) FROM audit WHERE detail_digest IS NULL").value() == 0);
  History h(db);
  std::set<std::int64_t> moved;
  for (int i = 0; i < 3; ++i) moved.insert(h.replied(k_day2 + 2h + i * 1min));
  const auto newest = h.everything(k_day3);

  // The second run upgrades the file to 0013 without re-hashing what it holds, and appends.
  const auto second = store::archive_before(db, dir.file("a.db"), options("2026-11-03"));
  REQUIRE(second);
  CHECK(second->moved.messages == 3);
  CHECK(second->stopped_at == newest);
  auto archive = open_archive_test_db(dir.file("a.db"));
  CHECK(store::schema_version(archive).value() == test::shipped_migrations().back().version);
  CHECK(messages(archive) == moved);
  // Two segments in one file: ids 1-3 by the old formula, the rest through digests, among
  // them the row 0013 re-hashed live and its chain_migrated event.
  CHECK(test::query_int(archive, "SELECT count(*) FROM audit WHERE detail_digest IS NULL").value() == 3);
  CHECK(test::query_int(archive, "SELECT max(id) FROM audit WHERE detail_digest IS NULL").value() == 3);
  CHECK(test::query_int(archive, "SELECT count(*) FROM audit WHERE id = 4 AND detail_digest IS NOT NULL").value() == 1);
  CHECK(test::query_int(archive, "SELECT count(*) FROM audit WHERE event = 'chain_migrated'").value() == 1);
  CHECK(test::query_int(archive,
                        "SELECT count(*) FROM audit a JOIN audit b ON b.id = 3 WHERE a.id = 4 AND a.prev_hash = b.hash")
            .value() == 1);
  require_chains(db, archive, store::ArchiveLink::linked);
  CHECK(store::verify_audit_archive(db, archive).value().archive.events ==
        test::query_int(archive, "SELECT count(*) FROM audit").value());

  // Each segment is checked by its own formula: an edit in either is caught.
  const auto first_broken_after = [&](const std::string& edit) {
    REQUIRE(test::exec(archive, "DROP TRIGGER audit_no_update; " + edit));  // the archive is SQLite
    return store::verify_audit_archive(db, archive).value().archive.first_broken;
  };
  SECTION("an edited legacy row") {
    CHECK(first_broken_after("UPDATE audit SET detail = '{\"n\":9}' WHERE id = 2") == 2);
  }
  SECTION("an edited digested row") { CHECK(first_broken_after("UPDATE audit SET detail = '{}' WHERE id = 4") == 4); }
}

TEST_CASE("archive: a message's files go with it, bytes another live file shares stay live too", "[store][archive]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto shared =
      test::stored_photo_message(db, {"wamid.A", "15550009991", "shared bytes", std::string(64, 'a')}, k_day1);
  const auto own =
      test::stored_photo_message(db, {"wamid.B", "15550009992", "only B's", std::string(64, 'b')}, k_day1 + 1h);
  const auto live =
      test::stored_photo_message(db, {"wamid.D", "15550009993", "shared bytes", std::string(64, 'a')}, k_day3);
  CHECK(test::query_int(db, "SELECT count(*) FROM media_blobs").value() == 2);

  const auto result = store::archive_before(db, dir.file("a.db"), options("2026-11-03"));
  REQUIRE(result);
  CHECK(result->moved.messages == 2);
  auto archive = open_archive_test_db(dir.file("a.db"));
  CHECK(test::query_int(archive, "SELECT count(*) FROM media").value() == 2);
  CHECK(test::query_int(archive, "SELECT count(*) FROM media_blobs").value() == 2);
  CHECK(test::media_bytes(archive, shared) == "shared bytes");
  CHECK(test::media_bytes(archive, own) == "only B's");
  // Live keeps the file of the message that stays, and only the bytes it uses.
  CHECK(test::query_int(db, "SELECT count(*) FROM media").value() == 1);
  CHECK(test::query_int(db, "SELECT count(*) FROM media_blobs").value() == 1);
  CHECK(test::query_int(db, "SELECT count(*) FROM media_chunks").value() == 1);
  CHECK(test::media_bytes(db, live) == "shared bytes");
  require_chains(db, archive, store::ArchiveLink::linked);
}
