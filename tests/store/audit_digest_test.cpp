// The audit chain's salted digest (store/audit_digest.h) and migration 0013, which moves an
// existing chain over to it.
#include <catch2/catch.hpp>

#include <algorithm>

#include "store/audit.h"
#include "store/audit_digest.h"
#include "store/migrations.h"
#include "tests/store/store_fixture.h"
#include "tests/store/temp_dir.h"
#include "tests/support/raw_sql.h"
#include "tests/test_util.h"

using namespace dispatchd;

namespace {

constexpr const char* k_digest_now = "2026-12-01T00:00:00Z";

std::vector<store::Migration> shipped() { return test::shipped_migrations(); }

// The formula before 0013, written out here on its own: sha256(prev || canonical) where
// canonical is each of id, at, event, message_id ("" for none), actor, detail as "len:value;".
std::string old_hash(const std::string& prev, std::int64_t id, const std::string& at, const std::string& detail) {
  std::string canonical;
  for (const std::string& field :
       {std::to_string(id), at, std::string("received"), std::string(), std::string("dispatchd"), detail})
    canonical += std::to_string(field.size()) + ":" + field + ";";
  return store::sha256_hex(prev + canonical);
}

// A database at the version before 0013 with `rows` audit events written with the old formula.
struct OldChain {
  test::TempDir dir;
  store::Database db;
  std::string head = store::k_audit_genesis;

  explicit OldChain(int rows) : db(test::open_db(dir).value()) {
    auto before = shipped();
    std::erase_if(before, [](const store::Migration& m) { return m.version >= 13; });
    REQUIRE(store::migrate(db, before, k_digest_now));
    for (int id = 1; id <= rows; ++id) {
      const std::string at = "2026-11-30T12:00:0" + std::to_string(id % 10) + "Z";
      const std::string detail = R"({"n":)" + std::to_string(id) + "}";
      const std::string hash = old_hash(head, id, at, detail);
      REQUIRE(test::exec(db, "INSERT INTO audit(id, at, event, message_id, actor, detail, prev_hash, hash) VALUES (" +
                                 std::to_string(id) + ", '" + at + "', 'received', NULL, 'dispatchd', '" + detail +
                                 "', '" + head + "', '" + hash + "')"));
      head = hash;
    }
  }

  store::AuditCheck verify() {
    auto check = store::verify_audit(db);
    REQUIRE(check);
    return *check;
  }
};

}  // namespace

TEST_CASE("0013: an existing chain is verified, re-hashed with salted digests, verified, and tied to its old head",
          "[audit][migrate]") {
  OldChain old(5);
  const auto before = old.verify();  // the old formula, on the old schema
  CHECK(before.events == 5);
  CHECK_FALSE(before.first_broken);

  auto upgraded = store::migrate(old.db, shipped(), k_digest_now);
  REQUIRE(upgraded);
  CHECK(std::ranges::count(upgraded->applied, std::string("0013_audit_salted_digest.sql")) == 1);

  const auto after = old.verify();
  CHECK(after.events == 6);
  CHECK_FALSE(after.first_broken);
  // Every row committed through a salt and digest; the first still links to the genesis.
  CHECK(test::query_int(old.db, "SELECT count(*) FROM v_audit WHERE length(salt) = 32 AND length(detail_digest) = 64")
            .value() == 6);
  CHECK(test::query_int(old.db, std::string("SELECT count(*) FROM audit WHERE id = 1 AND prev_hash = '") +
                                    store::k_audit_genesis + "'")
            .value() == 1);
  CHECK(test::query_int(old.db, "SELECT count(*) FROM audit WHERE hash = '" + old.head + "'").value() == 0);
  // The auditor holding the old head finds it, and the old count, in the new chain.
  CHECK(test::query_int(old.db,
                        "SELECT count(*) FROM audit WHERE id = 6 AND event = 'chain_migrated' AND actor = 'dispatchd'"
                        " AND " +
                            test::json_text("detail", "old_head") + " = '" + old.head + "' AND " +
                            test::json_integer("detail", "old_rows") + " = 5")
            .value() == 1);
  // The details themselves are unchanged, and new events follow the new formula.
  CHECK(test::query_int(old.db, R"(SELECT count(*) FROM audit WHERE id = 3 AND detail = '{"n":3}')").value() == 1);
  REQUIRE(
      store::record_event(old.db, {k_digest_now, store::AuditKind::config_reload, std::nullopt, "dispatchd", "{}"}));
  CHECK(old.verify().events == 7);
  CHECK_FALSE(old.verify().first_broken);
}

TEST_CASE("0013: a broken chain is refused, nothing migrated", "[audit][migrate]") {
  OldChain old(4);
  REQUIRE(test::exec(old.db, test::drop_audit_trigger() + "UPDATE audit SET detail = '{\"n\":99}' WHERE id = 2"));
  auto refused = store::migrate(old.db, shipped(), k_digest_now);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.starts_with("0013_audit_salted_digest.sql: "));
  CAPTURE(refused.error().message);
  CHECK(refused.error().message.find("broken at audit id 2") != std::string::npos);
  CHECK(store::schema_version(old.db).value() < 13);
  CHECK(test::query_int(old.db, store::sql::column_exists(test::test_backend(), "audit", "salt")).value() == 0);
  CHECK(old.verify().first_broken == 2);
}

TEST_CASE("0013: the code step is skipped when the predicate says so, legacy rows still verify", "[audit][migrate]") {
  OldChain old(3);
  store::MigrateOptions archive_file;
  int asked = 0;
  archive_file.run_code_step = [&](store::Database&, int version) {
    asked += version == 13;
    return false;
  };
  REQUIRE(store::migrate(old.db, shipped(), k_digest_now, archive_file));
  CHECK(asked == 1);
  CHECK(test::query_int(old.db, "SELECT count(*) FROM audit WHERE detail_digest IS NULL").value() == 3);
  CHECK(old.verify().events == 3);
  CHECK_FALSE(old.verify().first_broken);
  // A legacy row edited is still caught by the old formula.
  REQUIRE(test::exec(old.db, test::drop_audit_trigger() + "UPDATE audit SET detail = '{}' WHERE id = 2"));
  CHECK(old.verify().first_broken == 2);
}

TEST_CASE("0013: an empty trail gets no chain_migrated event", "[audit][migrate]") {
  OldChain old(0);
  REQUIRE(store::migrate(old.db, shipped(), k_digest_now));
  CHECK(test::query_int(old.db, "SELECT count(*) FROM audit").value() == 0);
}

namespace {

// A migrated database with `rows` events written by today's store, tampered with by `sql`.
store::AuditCheck tampered_digest(int rows, const std::string& sql) {
  OldChain old(0);
  REQUIRE(store::migrate(old.db, shipped(), k_digest_now));
  for (int i = 1; i <= rows; ++i)
    REQUIRE(store::record_event(old.db, {k_digest_now, store::AuditKind::received, std::nullopt, "dispatchd",
                                         R"({"n":)" + std::to_string(i) + "}"}));
  REQUIRE(old.verify().events == rows);
  REQUIRE_FALSE(old.verify().first_broken);
  REQUIRE(test::exec(old.db, sql));
  return old.verify();
}

}  // namespace

TEST_CASE("0013: tampering is still detected through the digest and the hash", "[audit]") {
  SECTION("a changed detail no longer matches its digest") {
    const auto check =
        tampered_digest(4, test::drop_audit_trigger() + "UPDATE audit SET detail = '{\"n\":9}' WHERE id = 2");
    CHECK(check.first_broken == 2);
    CHECK(check.reason.find("does not match its digest") != std::string::npos);
  }
  SECTION("a changed digest (with a detail to match) no longer matches the hash") {
    const auto check = tampered_digest(4, test::drop_audit_trigger() +
                                              "UPDATE audit SET detail = '{\"n\":9}',"
                                              " detail_digest = '" +
                                              std::string(64, 'a') + "' WHERE id = 3");
    CHECK(check.first_broken == 3);
  }
  SECTION("a digest recomputed for a new detail breaks the row's hash") {
    // The digest is sha256(salt || detail); SQLite has no sha256, so the store's function writes it.
    const auto digest = store::detail_digest("00112233445566778899aabbccddeeff", R"({"n":9})");
    const auto check = tampered_digest(4, test::drop_audit_trigger() +
                                              "UPDATE audit SET salt = '00112233445566778899aabbccddeeff',"
                                              " detail = '{\"n\":9}', detail_digest = '" +
                                              digest + "' WHERE id = 3");
    CHECK(check.first_broken == 3);
    CHECK(check.reason.find("do not match its hash") != std::string::npos);
  }
  SECTION("an erased row's detail must be the tombstone") {
    const auto erased = tampered_digest(3, "UPDATE audit SET salt = NULL, detail = '{\"erased\":true}' WHERE id = 2");
    CHECK_FALSE(erased.first_broken);
    const auto forged = tampered_digest(
        3, test::drop_audit_trigger() + "UPDATE audit SET salt = NULL, detail = '{\"n\":7}' WHERE id = 2");
    CHECK(forged.first_broken == 2);
    CHECK(forged.reason.find("not the erasure tombstone") != std::string::npos);
  }
  SECTION("a legacy-looking row (digest removed) no longer matches") {
    const auto check = tampered_digest(
        3, test::drop_audit_trigger() + "UPDATE audit SET salt = NULL, detail_digest = NULL WHERE id = 2");
    CHECK(check.first_broken == 2);
  }
}

TEST_CASE("0013: the trigger allows only an erasure's change", "[audit]") {
  OldChain old(0);
  REQUIRE(store::migrate(old.db, shipped(), k_digest_now));
  REQUIRE(store::record_event(
      old.db, {k_digest_now, store::AuditKind::received, std::nullopt, "dispatchd", R"({"phone":"34600111222"})"}));
  CHECK_FALSE(test::exec(old.db, "UPDATE audit SET detail = '{}' WHERE id = 1"));
  CHECK_FALSE(test::exec(old.db, "UPDATE audit SET salt = NULL, detail = '{}' WHERE id = 1"));
  CHECK_FALSE(
      test::exec(old.db, "UPDATE audit SET salt = NULL, detail = '{\"erased\":true}', actor = 'x' WHERE id = 1"));
  CHECK_FALSE(test::exec(old.db, "UPDATE audit SET salt = 'aa', detail_digest = 'bb' WHERE id = 1"));
  CHECK(test::exec(old.db, "UPDATE audit SET salt = NULL, detail = '{\"erased\":true}' WHERE id = 1"));
  CHECK_FALSE(old.verify().first_broken);
}
