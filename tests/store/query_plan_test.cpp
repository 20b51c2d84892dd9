// White-box: the plans SQLite picks for the inbox's queries on each message's path. No
// answer shows them (the same rows come back whichever index is walked), yet on a year of
// history they decided between a few page reads per message and hundreds, on the event loop
// (BENCHMARKS.md, "webhooks from the history's own customers"). The statements are caught as
// the store runs them (sqlite3_trace_v2), then explained on the same connection, as a fresh
// database without statistics plans them (dispatchd runs no ANALYZE).
#include <sqlite3.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "store/attempts.h"
#include "store/inbox.h"
#include "store/internal/access.h"
#include "store/internal/turn_rows.h"
#include "store/outbox.h"
#include "store/queue.h"
#include "store/read_ahead.h"
#include "store/turns.h"
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

store::InboundMessage message(const std::string& id, const std::string& sender = "15551234567") {
  return {"whatsapp", id, sender, sender, "hola", R"({"id":")" + id + "\"}"};
}

// The most rows one run of each statement the store ran during `work` stepped through in
// full table scans (SQLite's own count, SQLITE_STMTSTATUS_FULLSCAN_STEP: what a scan costs, whatever its plan
// text says). A statement's count is read as it starts and again as it ends (its profile
// event, at its reset), while it is certainly alive: BEGIN and COMMIT are finalized at once.
struct ScanCounts {
  std::map<sqlite3_stmt*, int> at_start;  // the statements running now
  std::map<std::string, int> by_sql;      // the most of one run
};

int counted(unsigned event, void* context, void* statement, void*) {
  auto& counts = *static_cast<ScanCounts*>(context);
  auto* stmt = static_cast<sqlite3_stmt*>(statement);
  const int now = sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_FULLSCAN_STEP, 0);
  if (event == SQLITE_TRACE_STMT) {
    counts.at_start.try_emplace(stmt, now);  // a trigger's body reports its statement again
  } else if (const auto it = counts.at_start.find(stmt); it != counts.at_start.end()) {
    int& most = counts.by_sql[sqlite3_sql(stmt)];
    most = std::max(most, now - it->second);
    counts.at_start.erase(it);
  }
  return 0;
}

template <typename Work>
std::map<std::string, int> scan_steps_during(store::Database& db, Work work) {
  ScanCounts counts;
  sqlite3* handle = store::internal::Access::handle(db);
  REQUIRE(sqlite3_trace_v2(handle, SQLITE_TRACE_STMT | SQLITE_TRACE_PROFILE, counted, &counts) == SQLITE_OK);
  work();
  REQUIRE(sqlite3_trace_v2(handle, 0, nullptr, nullptr) == SQLITE_OK);
  CHECK(counts.at_start.empty());  // every statement ended
  return counts.by_sql;
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

TEST_CASE("query plans: the take by turns walks the unanswered messages by arrival and the turn by its index",
          "[inbox][turns][sqlite]") {
  if (test::on_postgresql()) return;  // SQLite's planner; PostgreSQL plans by its statistics
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const store::TurnRule rule{std::chrono::milliseconds(1500), std::chrono::milliseconds(6000)};
  REQUIRE(store::insert_inbound(db, message("wamid.1"), k_t0));
  REQUIRE(store::insert_inbound(db, message("wamid.2"), k_t0));
  const auto take = reads_during(db, [&] {
    const auto taken =
        store::take_turn(db, "w", store::Instant(k_t0) + std::chrono::seconds(2), std::chrono::seconds(60), rule);
    REQUIRE(taken);
    REQUIRE(taken->taken);
    CHECK(taken->taken->joined.size() == 1);
  });
  REQUIRE(take.size() == 3);  // the quiet scan, the expired scan, the turn's messages
  for (const auto& sql : take) {
    const std::string plan = plan_of(db, sql);
    INFO(sql << "\n" << plan);
    CHECK_THAT(plan, !Catch::Contains("SCAN m") && !Catch::Contains("SCAN e") && !Catch::Contains("SCAN q") &&
                         !Catch::Contains("SCAN inbox"));
  }
  CHECK_THAT(plan_of(db, take[0]), Catch::Contains("SEARCH m USING INDEX inbox_arrived (arrived_ms<?)"));
  CHECK_THAT(plan_of(db, take[0]), Catch::Contains("SEARCH q USING INDEX inbox_unfinished (conversation_id=?)"));
}

TEST_CASE("query plans: the send's check for an earlier unsent reply reads only the recipient's unsent rows",
          "[outbox][sqlite]") {
  if (test::on_postgresql()) return;  // SQLite's planner; PostgreSQL plans by its statistics
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto in = store::insert_inbound(db, message("wamid.1"), k_t0);
  REQUIRE(in);
  REQUIRE(store::add_action(
      db, {.message_id = in->id, .action = "send_message", .arguments = "{}", .recipient = "15551234567", .body = "ok"},
      k_t0));
  // Through actions_recipient it would read every action ever sent to the recipient for its
  // status; actions_recipient_unsent holds only the approved and sending ones.
  const auto reads = reads_during(db, [&] { REQUIRE(store::begin_send(db, k_t0, "whatsapp").value()); });
  const auto pick =
      std::ranges::find_if(reads, [](const std::string& sql) { return sql.find("NOT EXISTS") != std::string::npos; });
  REQUIRE(pick != reads.end());
  const std::string plan = plan_of(db, *pick);
  INFO(*pick << "\n" << plan);
  CHECK_THAT(plan, Catch::Contains("SEARCH a USING INDEX actions_status (status=?)"));
  CHECK_THAT(plan, Catch::Contains("SEARCH p USING INDEX actions_recipient_unsent (recipient=?)"));
  CHECK_THAT(plan, !Catch::Contains("SCAN a") && !Catch::Contains("SCAN p"));
}

TEST_CASE("query plans: no statement on a message's way through the store scans the history's tables",
          "[inbox][outbox][queue][sqlite]") {
  if (test::on_postgresql()) return;  // SQLite's counters; PostgreSQL plans by its statistics
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto reply = [](std::int64_t message_id, const std::string& to, const std::string& body) {
    return store::NewAction{
        .message_id = message_id, .action = "send_message", .arguments = "{}", .recipient = to, .body = body};
  };
  // Stored, taken and asked about, as the agent does before its decision.
  const auto taken = [&](const std::string& id, const std::string& sender) -> std::int64_t {
    const auto in = store::insert_inbound(db, message(id, sender), k_t0);
    REQUIRE(in);
    const auto lease = store::take_next(db, "w", k_t0, std::chrono::seconds(60));
    REQUIRE(lease.value());
    REQUIRE((*lease)->id == in->id);
    REQUIRE(store::count_attempts(db, in->id));
    REQUIRE(store::history(db, in->id, 10));
    REQUIRE(store::record_attempt(db,
                                  {.message_id = in->id,
                                   .attempt = 1,
                                   .provider = "openai",
                                   .model = "m",
                                   .request_summary = "{}",
                                   .raw_output = "{}",
                                   .verdict = store::Verdict::valid,
                                   .errors = "[]"},
                                  k_t0));
    REQUIRE(store::hold_lease(db, **lease, "w").value());
    return in->id;
  };
  // The outbox pump's send of the oldest approved action, the window checked first.
  const auto sent = [&](const std::string& provider_id) -> store::OutboxItem {
    auto item = store::begin_send(db, k_t0, "whatsapp");
    REQUIRE(item.value());
    REQUIRE(store::last_inbound_at(db, "whatsapp", (*item)->recipient));
    REQUIRE(store::complete_send(db, (*item)->id, provider_id, k_t0));
    return **item;
  };
  const auto escalated = [&](std::int64_t message_id, const std::string& sender) {
    const auto id = store::escalate_message(db,
                                            {message_id, store::EscalationReason::model_escalated, "{}",
                                             R"({"action":"send_message"})", reply(message_id, sender, "proposed")},
                                            reply(message_id, sender, "un momento"), k_t0);
    REQUIRE(id);
    return *id;
  };
  // A history from a few customers, answered and escalated (two in three of those dismissed
  // by staff): a scan of inbox, actions, attempts, escalations or audit on the way would step
  // through a hundred rows or more; a year of history has millions.
  constexpr int k_history = 300;
  for (int i = 0; i < k_history; ++i) {
    const std::string sender = "1555000000" + std::to_string(i % 5);
    const std::int64_t message_id = taken("wamid.old" + std::to_string(i), sender);
    if (i % 3 != 0) {
      REQUIRE(store::queue_reply(db, reply(message_id, sender, "ok"), k_t0));
    } else {
      const auto escalation = escalated(message_id, sender);
      if (i % 9 != 0)
        REQUIRE(store::close_escalation(db, escalation, "ana", store::EscalationStatus::dismissed, "", k_t0));
    }
    sent("wamid.out" + std::to_string(i));
  }

  // Two more messages, all the way, the first read ahead. One answered: stored, taken with its history, answered,
  // sent (which finishes it), and the provider's reports, by its id, by our key and about a
  // message that is not ours. One escalated with a holding reply, claimed and approved by
  // staff, and both replies sent.
  const auto steps = scan_steps_during(db, [&] {
    // What the channel reads ahead off the loop while storing is slow (store/read_ahead.h).
    const store::InboundMessage key{"whatsapp", "wamid.new", "15550000003", "15550000003", {}, {}, {}};
    const store::DeliveryReport old_report{"wamid.out7", "", store::DeliveryStatus::read, ""};
    REQUIRE(store::read_ahead(db, std::span(&key, 1), std::span(&old_report, 1), 10));
    const auto answer = taken("wamid.new", "15550000003");
    REQUIRE(store::queue_reply(db, reply(answer, "15550000003", "ok"), k_t0));
    const auto item = sent("wamid.out.new");
    REQUIRE(store::apply_delivery(db, {"wamid.out.new", "", store::DeliveryStatus::delivered, ""}, k_t0)
                .value()
                .action_id == item.id);
    REQUIRE(store::apply_delivery(db, {"", item.idempotency_key, store::DeliveryStatus::read, ""}, k_t0)
                .value()
                .action_id == item.id);
    REQUIRE(
        !store::apply_delivery(db, {"wamid.not.ours", "", store::DeliveryStatus::read, ""}, k_t0).value().action_id);

    const auto escalation = escalated(taken("wamid.new2", "15550000004"), "15550000004");
    sent("wamid.out.holding");
    REQUIRE(store::claim_escalation(db, escalation, "ana", k_t0));
    REQUIRE(store::approve_escalation(db, escalation, "ana", k_t0));
    sent("wamid.out.approved");
  });
  REQUIRE(steps.size() > 10);
  for (const auto& [sql, scanned] : steps) {
    INFO(sql);
    // Small tables only (the metric counters, the audit tail: a handful of rows each) and the
    // history's ten newest rows, which it reads twice.
    CHECK(scanned < k_history / 10);
  }
}

TEST_CASE("query plans: a turn's state changes find its messages by key, not every message in that state",
          "[inbox][turns][sqlite]") {
  if (test::on_postgresql()) return;  // SQLite's planner; PostgreSQL plans by its statistics
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  for (const char* state : {"'processing'", "'decided'"}) {
    const auto change =
        store::internal::turn_change("UPDATE inbox SET state = 'done' WHERE ", std::string(" AND state = ") + state);
    // With `id = ?1 OR turn_id = ?1` it was "SEARCH inbox USING INDEX inbox_ready (state=?)":
    // every message in that state, thousands of decided ones under load, on each send's outcome.
    const std::string lead = plan_of(db, change.lead);
    INFO(change.lead << "\n" << lead);
    CHECK_THAT(lead, Catch::Contains("SEARCH inbox USING INTEGER PRIMARY KEY (rowid=?)"));
    const std::string members = plan_of(db, change.members);
    INFO(change.members << "\n" << members);
    CHECK_THAT(members, Catch::Contains("SEARCH inbox USING INDEX inbox_turn (turn_id=?"));
  }
}
