// White-box: the plans SQLite picks for the inbox's queries on each message's path. No
// answer shows them (the same rows come back whichever index is walked), yet on a year of
// history they decided between a few page reads per message and hundreds, on the event loop
// (BENCHMARKS.md, "webhooks from the history's own customers"). The statements are caught as
// the store runs them (sqlite3_trace_v2), then explained on the same connection, as a fresh
// database without statistics plans them (dispatchd runs no ANALYZE).
#include <sqlite3.h>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "store/inbox.h"
#include "store/internal/access.h"
#include "tests/store/store_fixture.h"

using namespace dispatchd;
using test::k_t0;

namespace {

int caught(unsigned, void* context, void* statement, void*) {
  static_cast<std::vector<std::string>*>(context)->push_back(sqlite3_sql(static_cast<sqlite3_stmt*>(statement)));
  return 0;
}

// The reading statements (SELECT, WITH) the store ran during `work`, in order.
template <typename Work>
std::vector<std::string> reads_during(store::Database& db, Work work) {
  std::vector<std::string> all;
  sqlite3* handle = store::internal::Access::handle(db);
  REQUIRE(sqlite3_trace_v2(handle, SQLITE_TRACE_STMT, caught, &all) == SQLITE_OK);
  work();
  REQUIRE(sqlite3_trace_v2(handle, 0, nullptr, nullptr) == SQLITE_OK);
  std::vector<std::string> reads;
  for (const auto& sql : all)
    if (sql.starts_with("SELECT") || sql.starts_with("WITH")) reads.push_back(sql);
  return reads;
}

// EXPLAIN QUERY PLAN's steps for `sql`, one per line.
std::string plan_of(store::Database& db, const std::string& sql) {
  sqlite3_stmt* explain = nullptr;
  REQUIRE(sqlite3_prepare_v2(store::internal::Access::handle(db), ("EXPLAIN QUERY PLAN " + sql).c_str(), -1, &explain,
                             nullptr) == SQLITE_OK);
  std::string out;
  while (sqlite3_step(explain) == SQLITE_ROW)
    out += std::string(reinterpret_cast<const char*>(sqlite3_column_text(explain, 3))) + "\n";
  sqlite3_finalize(explain);
  return out;
}

store::InboundMessage message(const std::string& id) {
  return {"whatsapp", id, "15551234567", "15551234567", "hola", R"({"id":")" + id + "\"}"};
}

}  // namespace

TEST_CASE("query plans: the take and the prompt's history walk their indexes, never a conversation's whole past",
          "[inbox][sqlite]") {
  if (test::on_postgresql()) return;  // SQLite's planner; PostgreSQL plans by its statistics
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  REQUIRE(store::insert_inbound(db, message("wamid.1"), k_t0));
  const auto second = store::insert_inbound(db, message("wamid.2"), k_t0);
  REQUIRE(second);

  // Both scans of a take (received; processing with an expired lease) find their candidate
  // through an index on state and check for an unfinished earlier message of its
  // conversation in inbox_unfinished (a handful of rows), not in inbox_conversation (every
  // earlier message, each row read for its state).
  const auto take = reads_during(db, [&] { REQUIRE(store::take_next(db, "w", k_t0, std::chrono::seconds(60))); });
  REQUIRE(take.size() == 2);
  for (const auto& sql : take) {
    const std::string plan = plan_of(db, sql);
    INFO(sql << "\n" << plan);
    CHECK_THAT(plan, Catch::Contains("SEARCH m USING INDEX inbox_"));
    CHECK_THAT(plan, Catch::Contains("SEARCH e USING INDEX inbox_unfinished (conversation_id=? AND id<?)"));
    CHECK_THAT(plan, !Catch::Contains("SCAN m") && !Catch::Contains("SCAN e"));
  }

  // The history walks inbox_conversation backwards for the newest messages and looks each
  // one's replies up by message; through actions_status it would walk every sent action of
  // the whole history (the planner's choice when the status test is written plainly).
  const auto history = reads_during(db, [&] { REQUIRE(store::history(db, second->id, 10)); });
  REQUIRE(history.size() == 1);
  const std::string plan = plan_of(db, history[0]);
  INFO(history[0] << "\n" << plan);
  CHECK_THAT(plan, Catch::Contains("SEARCH inbox USING INDEX inbox_conversation (conversation_id=? AND id<?)"));
  CHECK_THAT(plan, Catch::Contains("SEARCH a USING INDEX actions_message (message_id=?)"));
  CHECK_THAT(plan, !Catch::Contains("actions_status") && !Catch::Contains("SCAN inbox") && !Catch::Contains("SCAN a"));
}
