#include <catch2/catch.hpp>

#include "store/audit.h"
#include "store/migrations.h"
#include "store/transaction.h"
#include "store/views.h"
#include "tests/store/store_fixture.h"
#include "tests/store/temp_dir.h"
#include "tests/support/raw_sql.h"
#include "tests/test_util.h"

using namespace dispatchd;

namespace {

// A migrated database with `events` audit rows.
store::Database trail(const test::TempDir& dir, int events) {
  auto db = test::open_db(dir);
  REQUIRE(db);
  REQUIRE(store::migrate(*db, test::shipped_migrations(), "2026-11-30T12:00:00Z"));
  for (int i = 1; i <= events; ++i) {
    REQUIRE(test::exec(*db, "BEGIN"));
    REQUIRE(store::append_audit(*db, {"2026-11-30T12:00:0" + std::to_string(i % 10) + "Z", store::AuditKind::received,
                                      std::nullopt, "dispatchd", R"({"n":)" + std::to_string(i) + "}"}));
    REQUIRE(test::exec(*db, "COMMIT"));
  }
  return std::move(*db);
}

// Tampers with a trail of `events` rows through `sql` and returns what verify says.
store::AuditCheck tampered(int events, const std::string& sql) {
  test::TempDir dir;
  auto db = trail(dir, events);
  REQUIRE(test::exec(db, sql));
  const auto check = store::verify_audit(db);
  REQUIRE(check);
  return *check;
}

}  // namespace

TEST_CASE("audit: a clean trail verifies, and each row chains to the previous", "[audit]") {
  test::TempDir dir;
  auto db = trail(dir, 5);
  const auto check = store::verify_audit(db);
  REQUIRE(check);
  CHECK(check->events == 5);
  CHECK_FALSE(check->first_broken);
  CHECK(
      test::query_int(
          db, "SELECT count(*) FROM v_audit a JOIN v_audit b ON b.audit_id = a.audit_id + 1 WHERE b.prev_hash = a.hash")
          .value() == 4);
  CHECK(test::query_int(
            db, std::string("SELECT count(*) FROM audit WHERE id = 1 AND prev_hash = '") + store::k_audit_genesis + "'")
            .value() == 1);
}

// A newer dispatchd may write a kind this one does not know: the row still verifies and
// lists, as stored, with no kind; the known ones list with theirs.
TEST_CASE("audit: a row of a kind this dispatchd does not know verifies and lists", "[audit]") {
  test::TempDir dir;
  auto db = trail(dir, 2);
  REQUIRE(test::record_named_event(db, {"2026-12-01T12:00:00Z", "invoice_sent", std::nullopt, "dispatchd", "{}"}));
  REQUIRE(store::record_event(
      db, {"2026-12-01T12:00:01Z", store::AuditKind::config_reload, std::nullopt, "dispatchd", R"({"catalog":"x"})"}));
  const auto check = store::verify_audit(db);
  REQUIRE(check);
  CHECK(check->events == 4);
  CHECK_FALSE(check->first_broken);
  auto rows = store::list_audit(db, std::nullopt, std::nullopt);
  REQUIRE(rows);
  REQUIRE(rows->size() == 4);
  CHECK(rows->at(0).kind == store::AuditKind::received);
  CHECK(rows->at(2).event == "invoice_sent");
  CHECK_FALSE(rows->at(2).kind);
  CHECK(rows->at(3).event == "config_reload");
  CHECK(rows->at(3).kind == store::AuditKind::config_reload);
}

TEST_CASE("audit: the table refuses UPDATE unless the trigger is dropped", "[audit]") {
  test::TempDir dir;
  auto db = trail(dir, 2);
  CHECK_FALSE(test::exec(db, "UPDATE audit SET detail = '{}' WHERE id = 1"));
}

TEST_CASE("audit: an edited row is named", "[audit]") {
  const auto check = tampered(5, test::drop_audit_trigger() + "UPDATE audit SET detail = '{\"n\":99}' WHERE id = 3");
  CHECK(check.first_broken == 3);
  CHECK(check.reason.find("the row was changed") != std::string::npos);
}

TEST_CASE("audit: a deleted row breaks the chain at the next one", "[audit]") {
  const auto check = tampered(5, "DELETE FROM audit WHERE id = 2");
  CHECK(check.first_broken == 3);
  CHECK(check.reason.find("deleted or changed") != std::string::npos);
}

TEST_CASE("audit: a row re-hashed by hand still breaks the next link", "[audit]") {
  const auto check =
      tampered(4, test::drop_audit_trigger() + "UPDATE audit SET detail = '{}', hash = 'forged' WHERE id = 2");
  CHECK(check.first_broken == 2);  // its own hash no longer matches its contents
}

namespace {

store::AuditRecord event(const std::string& name) {
  return {"2026-12-01T12:00:00Z", name, std::nullopt, "dispatchd", "{}"};
}

store::Result<void> append(store::Database& db, const std::string& name) {
  auto appended = test::append_named_event(db, event(name));
  if (!appended) return std::unexpected(appended.error());
  return {};
}

void verified(store::Database& db, std::int64_t events) {
  const auto check = store::verify_audit(db);
  REQUIRE(check);
  CHECK(check->events == events);
  CHECK_FALSE(check->first_broken);
}

}  // namespace

TEST_CASE("audit: the remembered tail never skips a row rolled back or written by another connection", "[audit]") {
  test::TempDir dir;
  auto db = trail(dir, 1);
  auto other = test::open_db(dir);
  REQUIRE(other);

  // Several appends in one transaction chain on each other (the tail is remembered).
  REQUIRE(store::transaction<void>(db, [&]() -> store::Result<void> {
    for (int i = 0; i < 3; ++i) {
      if (auto ok = append(db, "in one transaction"); !ok) return ok;
    }
    return {};
  }));
  verified(db, 4);

  // A savepoint rolled back after an append: the next append must not chain on the undone row.
  REQUIRE(store::transaction<void>(db, [&]() -> store::Result<void> {
    auto undone = store::transaction<void>(db, [&]() -> store::Result<void> {
      if (auto ok = append(db, "undone"); !ok) return ok;
      return std::unexpected(store::Error::refused("refused after writing"));
    });
    if (undone) return std::unexpected(store::Error::internal("the inner step should have failed"));
    return append(db, "after the rollback");
  }));
  verified(db, 5);

  // Another connection appends between our transactions.
  REQUIRE(test::record_named_event(*other, event("from dispatchctl")));
  REQUIRE(test::record_named_event(db, event("ours again")));
  verified(db, 7);
  CHECK(test::query_int(db, "SELECT count(*) FROM audit WHERE event = 'undone'").value() == 0);
}
