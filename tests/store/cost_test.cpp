// Cost in the store (migration 0010): the token columns and cost_usd of v_attempts, a
// message's cost in v_messages, the metric_usage counters, and an upgrade with old rows.
#include <catch2/catch.hpp>

#include "store/attempts.h"
#include "store/metrics.h"
#include "store/views.h"
#include "tests/store/escalate_fixture.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

std::int64_t message(store::Database& db, const std::string& id) {
  auto stored = store::insert_inbound(db, {"whatsapp", id, "1555", "1555", "hola", "{}"}, test::k_t0);
  REQUIRE(stored);
  return stored->id;
}

store::AttemptRecord attempt(std::int64_t message_id, int n, std::optional<double> cost,
                             const std::string& model = "gpt-4o-mini") {
  return {.message_id = message_id,
          .attempt = n,
          .provider = "openai",
          .model = model,
          .request_summary = "POST",
          .raw_output = "{}",
          .verdict = store::Verdict::valid,
          .latency_ms = 400,
          .input_tokens = 1000,
          .output_tokens = 200,
          .finish_reason = "stop",
          .cached_input_tokens = 500,
          .cache_write_tokens = 0,
          .reasoning_tokens = 30,
          .cost_usd = cost};
}

long long count(store::Database& db, const std::string& sql) {
  auto n = test::query_int(db, sql);
  REQUIRE(n);
  return *n;
}

// SQLite's REAL compared in SQL to a tolerance: 1 when |column - expected| < 1e-12.
std::string near(const std::string& column, double expected) {
  return "abs(" + column + " - " + std::to_string(expected) + ") < 1e-12";
}

}  // namespace

TEST_CASE("cost: v_attempts has each attempt's tokens and cost, v_messages their sum", "[store][cost]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto priced = message(db, "wamid.1");
  const auto unknown = message(db, "wamid.2");
  const auto not_asked = message(db, "wamid.3");
  REQUIRE(store::record_attempt(db, attempt(priced, 1, 0.00025), test::k_t0));
  REQUIRE(store::record_attempt(db, attempt(priced, 2, 0.0005), test::k_t0 + 1s));
  REQUIRE(store::record_attempt(db, attempt(unknown, 1, 0.0001), test::k_t0));
  REQUIRE(store::record_attempt(db, attempt(unknown, 2, std::nullopt, "gpt-4o"), test::k_t0 + 1s));

  CHECK(count(db,
              "SELECT count(*) FROM v_attempts WHERE cached_input_tokens = 500 AND cache_write_tokens = 0"
              " AND reasoning_tokens = 30 AND input_tokens = 1000 AND output_tokens = 200") == 4);
  CHECK(count(db, "SELECT count(*) FROM v_attempts WHERE message_id = " + std::to_string(priced) +
                      " AND attempt = 2 AND " + near("cost_usd", 0.0005)) == 1);
  CHECK(count(db, "SELECT count(*) FROM v_attempts WHERE cost_usd IS NULL AND model = 'gpt-4o'") == 1);
  // The sum of the attempts; unknown when one is unknown (never a sum that leaves it out);
  // 0 for a message the model was never asked about.
  CHECK(count(db, "SELECT " + near("cost_usd", 0.00075) +
                      " FROM v_messages WHERE message_id = " + std::to_string(priced)) == 1);
  CHECK(count(db, "SELECT cost_usd IS NULL FROM v_messages WHERE message_id = " + std::to_string(unknown)) == 1);
  CHECK(count(db, "SELECT cost_usd = 0 FROM v_messages WHERE message_id = " + std::to_string(not_asked)) == 1);

  SECTION("the staff's case view reads them") {
    const auto escalation =
        test::escalate(db, "wamid.9", "1777", "x", store::EscalationReason::contract_failed, test::k_t0);
    const auto escalated =
        count(db, "SELECT message_id FROM v_escalations WHERE escalation_id = " + std::to_string(escalation));
    REQUIRE(store::record_attempt(db, attempt(escalated, 1, 0.125), test::k_t0));
    auto shown = store::show_escalation(db, escalation);
    REQUIRE(shown);
    REQUIRE(shown->attempts.size() == 1);
    const auto& row = shown->attempts[0];
    CHECK(row.cached_input_tokens == 500);
    CHECK(row.cache_write_tokens == 0);
    CHECK(row.reasoning_tokens == 30);
    REQUIRE(row.cost_usd);
    CHECK(*row.cost_usd == Approx(0.125));
  }

  SECTION("metric_usage keeps the totals /metrics reads") {
    auto snapshot = store::read_metrics(db);
    REQUIRE(snapshot);
    REQUIRE(snapshot->usage.size() == 2);
    const auto& mini = snapshot->usage[1];  // ordered by provider, model: gpt-4o, gpt-4o-mini
    CHECK(mini.model == "gpt-4o-mini");
    CHECK(mini.input_tokens == 3000);
    CHECK(mini.cached_input_tokens == 1500);
    CHECK(mini.output_tokens == 600);
    CHECK(mini.reasoning_tokens == 90);
    CHECK(mini.cost_usd == Approx(0.00085));
    CHECK(mini.priced == 3);
    CHECK(mini.unpriced == 0);
    const auto& big = snapshot->usage[0];
    CHECK(big.model == "gpt-4o");
    CHECK(big.cost_usd == 0);
    CHECK(big.priced == 0);
    CHECK(big.unpriced == 1);
    CHECK(big.input_tokens == 1000);
  }
}

TEST_CASE("cost: migration 0010 on a database with old rows keeps them valid", "[store][cost]") {
  test::TempDir dir;
  auto storage = test::db_before_migration(dir, 10);
  auto* db = &storage;
  // Messages as the binary before 0010 wrote them (its columns only: 0022's are not there).
  const auto old_message = [&](const std::string& id) {
    REQUIRE(test::exec(*db,
                       "INSERT INTO inbox(channel, provider_message_id, conversation_id, sender, received_at, text,"
                       " raw_payload) VALUES ('whatsapp', '" +
                           id + "', '1555', '1555', '2026-11-30T12:00:00Z', 'hola', '{}')"));
    return count(*db, "SELECT id FROM inbox WHERE provider_message_id = '" + id + "'");
  };
  const auto asked = old_message("wamid.old1");
  const auto not_asked = old_message("wamid.old2");
  // Attempts as the binary before 0010 wrote them (its columns only).
  for (int n = 1; n <= 2; ++n) {
    REQUIRE(test::exec(*db,
                       "INSERT INTO attempts(message_id, attempt, provider, model, verdict, latency_ms, input_tokens,"
                       " output_tokens, created_at) VALUES (" +
                           std::to_string(asked) + ", " + std::to_string(n) +
                           ", 'gemini', 'gemini-2.5-flash', 'invalid', 300, 900, 40, '2026-11-30T12:00:00Z')"));
  }
  test::migrate_all(*db, test::k_t0 + 24h);

  // The old rows: their tokens as they were, the new columns NULL, their cost unknown.
  CHECK(count(*db,
              "SELECT count(*) FROM v_attempts WHERE input_tokens = 900 AND output_tokens = 40"
              " AND cached_input_tokens IS NULL AND cache_write_tokens IS NULL AND reasoning_tokens IS NULL"
              " AND cost_usd IS NULL") == 2);
  CHECK(count(*db, "SELECT cost_usd IS NULL FROM v_messages WHERE message_id = " + std::to_string(asked)) == 1);
  CHECK(count(*db, "SELECT cost_usd = 0 FROM v_messages WHERE message_id = " + std::to_string(not_asked)) == 1);
  // The views keep their columns (message_type, finish_reason) and rows.
  CHECK(count(*db, "SELECT count(*) FROM v_messages WHERE message_type IS NULL AND outcome = 'pending'") == 2);
  // The counters start from the history: its tokens, every old attempt unpriced.
  auto snapshot = store::read_metrics(*db);
  REQUIRE(snapshot);
  REQUIRE(snapshot->usage.size() == 1);
  CHECK(snapshot->usage[0].input_tokens == 1800);
  CHECK(snapshot->usage[0].output_tokens == 80);
  CHECK(snapshot->usage[0].unpriced == 2);
  CHECK(snapshot->usage[0].priced == 0);
  // New attempts count on from there.
  auto next = attempt(asked, 3, 0.002, "gemini-2.5-flash");
  next.provider = "gemini";
  REQUIRE(store::record_attempt(*db, next, test::k_t0 + 25h));
  snapshot = store::read_metrics(*db);
  REQUIRE(snapshot);
  CHECK(snapshot->usage[0].input_tokens == 2800);
  CHECK(snapshot->usage[0].priced == 1);
  CHECK(snapshot->usage[0].cost_usd == Approx(0.002));
  CHECK(count(*db, "SELECT cost_usd IS NULL FROM v_messages WHERE message_id = " + std::to_string(asked)) == 1);
}
