// The spend per UTC day that llm.budget reads (migration 0025): kept by the trigger on
// attempts, per day and per conversation per day, priced and unpriced apart; an upgrade
// counts the attempts already recorded.
#include <catch2/catch.hpp>

#include "store/attempts.h"
#include "store/spend.h"
#include "tests/store/store_fixture.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

std::int64_t spend_message(store::Database& db, const std::string& id, const std::string& conversation) {
  auto stored = store::insert_inbound(db, {"whatsapp", id, conversation, conversation, "hola", "{}"}, test::k_t0);
  REQUIRE(stored);
  return stored->id;
}

store::AttemptRecord spend_attempt(std::int64_t message_id, int n, std::optional<double> cost) {
  return {.message_id = message_id,
          .attempt = n,
          .provider = "openai",
          .model = "gpt-4o-mini",
          .verdict = store::Verdict::valid,
          .input_tokens = 1000,
          .output_tokens = 200,
          .cost_usd = cost};
}

store::Spend day_spend(store::Database& db, store::Time t) {
  auto spend = store::read_day_spend(db, store::utc_day(t));
  REQUIRE(spend);
  return *spend;
}

store::Spend conversation_spend(store::Database& db, const std::string& conversation, store::Time t) {
  auto spend = store::read_conversation_spend(db, conversation, store::utc_day(t));
  REQUIRE(spend);
  return *spend;
}

}  // namespace

TEST_CASE("spend: the day's and each conversation's spend, priced and unpriced apart", "[store][spend]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto alice = spend_message(db, "wamid.1", "1555");
  const auto bob = spend_message(db, "wamid.2", "1666");
  // k_t0 is 12:00 UTC: 11 h 59 min later is the same day, 12 h later the next.
  REQUIRE(store::record_attempt(db, spend_attempt(alice, 1, 0.25), test::k_t0));
  REQUIRE(store::record_attempt(db, spend_attempt(alice, 2, std::nullopt), test::k_t0 + 1s));
  REQUIRE(store::record_attempt(db, spend_attempt(bob, 1, 0.5), test::k_t0 + 11h + 59min));
  REQUIRE(store::record_attempt(db, spend_attempt(bob, 2, 0.125), test::k_t0 + 12h));

  const auto today = day_spend(db, test::k_t0);
  CHECK(today.cost_usd == Approx(0.75));
  CHECK(today.priced == 2);
  CHECK(today.unpriced == 1);
  const auto alice_today = conversation_spend(db, "1555", test::k_t0);
  CHECK(alice_today.cost_usd == Approx(0.25));
  CHECK(alice_today.priced == 1);
  CHECK(alice_today.unpriced == 1);
  CHECK(conversation_spend(db, "1666", test::k_t0).cost_usd == Approx(0.5));

  SECTION("the next UTC day starts empty but for its own attempts") {
    const auto tomorrow = day_spend(db, test::k_t0 + 12h);
    CHECK(tomorrow.cost_usd == Approx(0.125));
    CHECK(tomorrow.priced == 1);
    CHECK(tomorrow.unpriced == 0);
    CHECK(conversation_spend(db, "1555", test::k_t0 + 12h) == store::Spend{});
    CHECK(day_spend(db, test::k_t0 + 48h) == store::Spend{});
  }
  SECTION("a conversation never asked about has spent nothing") {
    CHECK(conversation_spend(db, "1777", test::k_t0) == store::Spend{});
  }
  SECTION("the counts survive closing and opening the database") {
    { const store::Database closed = std::move(db); }
    auto reopened = test::open_db(dir);
    REQUIRE(reopened);
    CHECK(day_spend(*reopened, test::k_t0).cost_usd == Approx(0.75));
    CHECK(conversation_spend(*reopened, "1666", test::k_t0 + 12h).priced == 1);
  }
}

TEST_CASE("spend: migration 0025 counts the attempts recorded before it", "[store][spend]") {
  test::TempDir dir;
  auto db = test::db_before_migration(dir, 25);
  const auto asked = spend_message(db, "wamid.old", "1555");
  REQUIRE(store::record_attempt(db, spend_attempt(asked, 1, 0.5), test::k_t0));
  REQUIRE(store::record_attempt(db, spend_attempt(asked, 2, std::nullopt), test::k_t0 + 13h));
  test::migrate_all(db, test::k_t0 + 24h);
  CHECK(day_spend(db, test::k_t0) == store::Spend{0.5, 1, 0});
  CHECK(day_spend(db, test::k_t0 + 13h) == store::Spend{0, 0, 1});
  CHECK(conversation_spend(db, "1555", test::k_t0).priced == 1);
  // The trigger counts what comes after.
  REQUIRE(store::record_attempt(db, spend_attempt(asked, 3, 0.25), test::k_t0 + 13h));
  CHECK(day_spend(db, test::k_t0 + 13h) == store::Spend{0.25, 1, 1});
}
