#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "daemon/metrics.h"
#include "store/attempts.h"
#include "store/queue.h"
#include "tests/store/escalate_fixture.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"
#include "tests/support/seed.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

// The metrics of a migrated database with nothing in it.
store::MetricsSnapshot empty_snapshot(const test::TempDir& dir) {
  auto db = test::migrated_db(dir);
  auto snapshot = store::read_metrics(db);
  REQUIRE(snapshot);
  return std::move(*snapshot);
}

// The counts as full-table aggregates, what read_metrics computed before the counters
// (migration 0008): the oracle the trigger-kept counts must equal.
long long aggregate(store::Database& db, const std::string& sql) {
  auto n = test::query_int(db, sql);
  REQUIRE(n);
  return *n;
}

std::string sql_quoted(const std::string& label) { return "'" + label + "'"; }

// A count's labels as text, in the order of its table's columns.
std::vector<std::string> labels(const store::MessageCount& c) {
  return {c.channel, std::string(store::to_sql(c.outcome))};
}
std::vector<std::string> labels(const store::AttemptCount& c) {
  return {std::string(store::to_sql(c.verdict)), c.error_class};
}
std::vector<std::string> labels(const store::EscalationCount& c) {
  return {std::string(store::to_sql(c.reason)), std::string(store::to_sql(c.status))};
}
std::vector<std::string> labels(const store::ActionCount& c) { return {std::string(store::to_sql(c.status))}; }

// Each group's count against its table, and no group missing.
template <typename Count>
void check_groups(store::Database& db, const std::vector<Count>& groups, const std::string& table,
                  const std::vector<std::string>& columns) {
  long long total = 0;
  for (const auto& group : groups) {
    struct {
      std::vector<std::string> labels;
      std::int64_t count;
    } c{labels(group), group.count};
    REQUIRE(c.labels.size() == columns.size());
    std::string where;
    for (std::size_t i = 0; i < columns.size(); ++i)
      where += (i == 0 ? " WHERE " : " AND ") + columns[i] + " = " + sql_quoted(c.labels[i]);
    CHECK(c.count == aggregate(db, "SELECT count(*) FROM " + table + where));
    total += c.count;
  }
  CHECK(total == aggregate(db, "SELECT count(*) FROM " + table));
}

void check_counts_equal_aggregates(store::Database& db) {
  auto snapshot = store::read_metrics(db);
  REQUIRE(snapshot);
  check_groups(db, snapshot->messages, "inbox", {"channel", "outcome"});
  check_groups(db, snapshot->attempts, "attempts", {"verdict", "coalesce(error_class, '')"});
  check_groups(db, snapshot->escalations, "escalations", {"reason", "status"});
  check_groups(db, snapshot->actions, "actions", {"status"});
  CHECK(snapshot->reasks == aggregate(db, "SELECT count(*) FROM attempts WHERE attempt > 1"));
  long long timed = 0;
  for (const auto& h : snapshot->latency) {
    const std::string of =
        " FROM attempts WHERE provider = " + sql_quoted(h.provider) + " AND model = " + sql_quoted(h.model);
    CHECK(h.count == aggregate(db, "SELECT count(latency_ms)" + of));
    CHECK(h.sum_ms == aggregate(db, "SELECT sum(latency_ms)" + of));
    for (std::size_t i = 0; i < store::k_latency_buckets_ms.size(); ++i) {
      CHECK(h.cumulative[i] == aggregate(db, "SELECT count(*)" + of + " AND latency_ms <= " +
                                                 std::to_string(store::k_latency_buckets_ms[i])));
    }
    timed += h.count;
  }
  CHECK(timed == aggregate(db, "SELECT count(latency_ms) FROM attempts"));
}

}  // namespace

TEST_CASE("metrics: the counts kept by triggers equal the full-table aggregates", "[metrics]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  REQUIRE(test::seed_history(db, test::k_t0));
  check_counts_equal_aggregates(db);
  // Rows changing state move their counts: a claim, a resolve, a dismissal.
  using store::EscalationReason;
  const auto a = test::escalate(db, "m1", "1555", "a", EscalationReason::contract_failed, test::k_t0 + 72h);
  const auto b = test::escalate(db, "m2", "1555", "b", EscalationReason::undecodable, test::k_t0 + 72h);
  REQUIRE(store::claim_escalation(db, a, "ana", test::k_t0 + 73h));
  REQUIRE(store::close_escalation(db, a, "ana", store::EscalationStatus::resolved, "done", test::k_t0 + 74h));
  REQUIRE(store::close_escalation(db, b, "ana", store::EscalationStatus::dismissed, "spam", test::k_t0 + 74h));
  check_counts_equal_aggregates(db);
}

TEST_CASE("metrics: an upgraded database's counts are filled from its history", "[metrics]") {
  test::TempDir dir;
  auto db = test::open_db(dir);
  REQUIRE(db);
  auto before = test::shipped_migrations();
  // Every migration but 0008's (and 0015's, which alters its tables, 0025's, whose
  // PostgreSQL trigger counts into 0015's shards, and 0035's, whose SQLite rebuild of the
  // inbox makes 0008's triggers on it again): the history is written by today's store (the
  // salted audit chain of 0013 included), then 0008 fills the counts from it.
  std::erase_if(before, [](const store::Migration& m) {
    return m.version == 8 || m.version == 15 || m.version == 25 || m.version == 35;
  });
  REQUIRE(store::migrate(*db, before, store::format_time(test::k_t0)));
  // SQLite's 0021 rebuilt the escalations table and made 0008's triggers on it again: gone,
  // as they were before 0008, so that the history is written as a database without 0008's
  // counters would have been.
  if (!test::on_postgresql())
    REQUIRE(test::exec(*db, "DROP TRIGGER metric_escalations_insert; DROP TRIGGER metric_escalations_status"));
  REQUIRE(test::seed_history(*db, test::k_t0));
  test::migrate_all(*db, test::k_t0 + 48h);
  check_counts_equal_aggregates(*db);
}

TEST_CASE("metrics: the seeded history in the Prometheus text format", "[metrics]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const store::Time start = test::k_t0;
  REQUIRE(test::seed_history(db, start));
  auto snapshot = store::read_metrics(db);
  REQUIRE(snapshot);
  const std::string text = daemon::render_metrics(*snapshot, {3, false, 2}, start + 48h);
  CAPTURE(text);
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_messages_received_total counter\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_messages_received_total{channel=\"whatsapp\"} 7\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_messages_received_total{channel=\"gmail\"} 1\n"));
  CHECK_THAT(text,
             Catch::Contains("dispatchd_messages_finished_total{channel=\"whatsapp\",outcome=\"escalated\"} 5\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_attempts_total{verdict=\"invalid\",error_class=\"recipient\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_reasks_total 3\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_escalations_total{reason=\"contract_failed\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_sends_total{result=\"failed\"} 1\n"));
  CHECK_THAT(text,
             Catch::Contains(
                 "dispatchd_model_latency_seconds_bucket{provider=\"openai\",model=\"gpt-4o-mini\",le=\"1.000\"} 6\n"));
  CHECK_THAT(text,
             Catch::Contains("dispatchd_model_latency_seconds_count{provider=\"openai\",model=\"gpt-4o-mini\"} 9\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_inbox_waiting 1\n"));
  // The waiting message arrived at start + 24h50m.
  CHECK_THAT(
      text, Catch::Contains("dispatchd_oldest_waiting_age_seconds " + std::to_string((48h - 24h - 50min) / 1s) + "\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_in_flight 3\n"));
}

TEST_CASE("metrics: the WhatsApp channel's counters, only when it is enabled", "[metrics]") {
  test::TempDir dir;
  const auto snapshot = empty_snapshot(dir);
  daemon::ProcessGauges gauges;
  CHECK_THAT(daemon::render_metrics(snapshot, gauges, test::k_t0), !Catch::Contains("dispatchd_webhooks_total"));
  gauges.channels.push_back({.name = "whatsapp",
                             .sends_in_flight = 0,
                             .writes_retried = 0,
                             .writes_failed = 0,
                             .webhooks = connectors::WebhookCounters{.webhooks = 9,
                                                                     .accepted = 5,
                                                                     .bad_signatures = 2,
                                                                     .malformed = 1,
                                                                     .not_stored = 1,
                                                                     .messages_stored = 4,
                                                                     .duplicates = 1,
                                                                     .read_receipts_dropped = 3,
                                                                     .rounds_read_ahead = 7}});
  const std::string text = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CAPTURE(text);
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_webhooks_total counter\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_webhooks_total{channel=\"whatsapp\",result=\"accepted\"} 5\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_webhooks_total{channel=\"whatsapp\",result=\"bad_signature\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_webhooks_total{channel=\"whatsapp\",result=\"malformed\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_webhooks_total{channel=\"whatsapp\",result=\"not_stored\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_redeliveries_total{channel=\"whatsapp\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_read_receipts_dropped_total{channel=\"whatsapp\"} 3\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_webhook_rounds_read_ahead_total{channel=\"whatsapp\"} 7\n"));
}

TEST_CASE("metrics: open escalations past their response target, by reason", "[metrics][targets]") {
  test::TempDir dir;
  const auto snapshot = empty_snapshot(dir);
  daemon::ProcessGauges gauges;
  CHECK_THAT(daemon::render_metrics(snapshot, gauges, test::k_t0), !Catch::Contains("dispatchd_escalations_breached"));
  gauges.breached = {{"contract_failed", 2}, {"send_failed", 0}};
  const std::string text = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CAPTURE(text);
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_escalations_breached gauge\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_escalations_breached{reason=\"contract_failed\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_escalations_breached{reason=\"send_failed\"} 0\n"));
}

TEST_CASE("metrics: the event loop's steps as a histogram and the longest, only when they are timed", "[metrics]") {
  test::TempDir dir;
  const auto snapshot = empty_snapshot(dir);
  daemon::ProcessGauges gauges;
  CHECK_THAT(daemon::render_metrics(snapshot, gauges, test::k_t0), !Catch::Contains("dispatchd_loop_handler"));
  common::HandlerTimes times;
  times.add(std::chrono::microseconds(300));
  times.add(std::chrono::microseconds(7'500));
  times.add(std::chrono::microseconds(42'000));
  gauges.loop_handlers = times.snapshot();
  const std::string text = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CAPTURE(text);
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_loop_handler_seconds histogram\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_loop_handler_seconds_bucket{le=\"0.001000\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_loop_handler_seconds_bucket{le=\"0.010000\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_loop_handler_seconds_bucket{le=\"0.050000\"} 3\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_loop_handler_seconds_bucket{le=\"+Inf\"} 3\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_loop_handler_seconds_sum 0.049800\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_loop_handler_seconds_count 3\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_loop_handler_max_seconds gauge\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_loop_handler_max_seconds 0.042000\n"));
}

TEST_CASE("metrics: group commit's waits and the WAL's syncs as histograms, only when they run", "[metrics]") {
  test::TempDir dir;
  const auto snapshot = empty_snapshot(dir);
  daemon::ProcessGauges gauges;
  const std::string without = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CHECK_THAT(without, !Catch::Contains("dispatchd_store_durable_wait"));
  CHECK_THAT(without, !Catch::Contains("dispatchd_store_sync_seconds"));
  common::Histogram<store::k_durable_wait_bounds_us> waits;
  for (const std::int64_t us : {180, 250, 1'700, 2'000'000}) waits.add(us);  // 250: a bound is in its own bucket
  gauges.durable_waits = waits;
  // PostgreSQL syncs its own log: the daemon gives no sync_times there.
  const std::string waits_only = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CHECK_THAT(waits_only, !Catch::Contains("dispatchd_store_sync_seconds"));
  common::Histogram<store::k_sync_bounds_us> syncs;
  for (const std::int64_t us : {40, 180, 3'000}) syncs.add(us);
  gauges.sync_times = syncs;
  const std::string text = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CAPTURE(text);
  for (const char* line : {
           "# TYPE dispatchd_store_durable_wait_seconds histogram\n",
           "dispatchd_store_durable_wait_seconds_bucket{le=\"0.000250\"} 2\n",
           "dispatchd_store_durable_wait_seconds_bucket{le=\"0.001000\"} 2\n",
           "dispatchd_store_durable_wait_seconds_bucket{le=\"0.002000\"} 3\n",
           "dispatchd_store_durable_wait_seconds_bucket{le=\"1.000000\"} 3\n",
           "dispatchd_store_durable_wait_seconds_bucket{le=\"+Inf\"} 4\n",
           "dispatchd_store_durable_wait_seconds_sum 2.002130\n",
           "dispatchd_store_durable_wait_seconds_count 4\n",
           "# TYPE dispatchd_store_sync_seconds histogram\n",
           "dispatchd_store_sync_seconds_bucket{le=\"0.000050\"} 1\n",
           "dispatchd_store_sync_seconds_bucket{le=\"0.000250\"} 2\n",
           "dispatchd_store_sync_seconds_bucket{le=\"0.005000\"} 3\n",
           "dispatchd_store_sync_seconds_bucket{le=\"+Inf\"} 3\n",
           "dispatchd_store_sync_seconds_sum 0.003220\n",
           "dispatchd_store_sync_seconds_count 3\n",
       })
    CHECK_THAT(text, Catch::Contains(line));
}

TEST_CASE("metrics: the outbox pump's sends by channel", "[metrics]") {
  test::TempDir dir;
  const auto snapshot = empty_snapshot(dir);
  daemon::ProcessGauges gauges;
  CHECK_THAT(daemon::render_metrics(snapshot, gauges, test::k_t0), !Catch::Contains("dispatchd_sends_in_flight"));
  gauges.channels.push_back(
      {.name = "whatsapp", .sends_in_flight = 7, .writes_retried = 2, .writes_failed = 1, .webhooks = std::nullopt});
  const std::string text = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CAPTURE(text);
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_sends_in_flight gauge\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_sends_in_flight{channel=\"whatsapp\"} 7\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_send_result_write_failures_total counter\n"));
  CHECK_THAT(text,
             Catch::Contains("dispatchd_send_result_write_failures_total{channel=\"whatsapp\",kind=\"retried\"} 2\n"));
  CHECK_THAT(
      text, Catch::Contains("dispatchd_send_result_write_failures_total{channel=\"whatsapp\",kind=\"permanent\"} 1\n"));
  CHECK_THAT(text, !Catch::Contains("dispatchd_webhooks_total"));  // a channel without webhooks
}

TEST_CASE("metrics: failed group commits and WAL syncs, when group commit runs", "[metrics]") {
  test::TempDir dir;
  const auto snapshot = empty_snapshot(dir);
  daemon::ProcessGauges gauges;
  CHECK_THAT(daemon::render_metrics(snapshot, gauges, test::k_t0), !Catch::Contains("dispatchd_store_failures_total"));
  gauges.store_failures = daemon::ProcessGauges::StoreFailures{.commits = 7, .syncs = 2, .checkpoints = 3};
  const std::string text = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CAPTURE(text);
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_store_failures_total counter\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_store_failures_total{step=\"commit\"} 7\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_store_failures_total{step=\"sync\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_store_failures_total{step=\"checkpoint\"} 3\n"));
}

TEST_CASE("metrics: a polling channel's polls, messages, lag and pause", "[metrics]") {
  test::TempDir dir;
  const auto snapshot = empty_snapshot(dir);
  daemon::ProcessGauges gauges;
  gauges.channels.push_back({.name = "gmail",
                             .sends_in_flight = 0,
                             .writes_retried = 0,
                             .writes_failed = 0,
                             .webhooks = std::nullopt,
                             .polls = connectors::PollCounters{.polls = 40,
                                                               .poll_failures = 3,
                                                               .messages_stored = 12,
                                                               .duplicates = 2,
                                                               .undecodable = 1,
                                                               .full_syncs = 1,
                                                               .last_success = test::k_t0 - std::chrono::seconds(75)},
                             .paused = true});
  const std::string text = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CAPTURE(text);
  CHECK_THAT(text, Catch::Contains("dispatchd_channel_paused{channel=\"gmail\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_polls_total{channel=\"gmail\",result=\"ok\"} 40\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_polls_total{channel=\"gmail\",result=\"failed\"} 3\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_polled_messages_total{channel=\"gmail\",kind=\"stored\"} 12\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_polled_messages_total{channel=\"gmail\",kind=\"duplicate\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_polled_messages_total{channel=\"gmail\",kind=\"undecodable\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_poll_full_syncs_total{channel=\"gmail\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_poll_lag_seconds{channel=\"gmail\"} 75\n"));
  gauges.channels.back().polls->last_success.reset();
  gauges.channels.back().paused = false;
  const std::string fresh = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CHECK_THAT(fresh, Catch::Contains("dispatchd_poll_lag_seconds{channel=\"gmail\"} -1\n"));
  CHECK_THAT(fresh, Catch::Contains("dispatchd_channel_paused{channel=\"gmail\"} 0\n"));
}

TEST_CASE("metrics: open escalations by reason, and the age of the oldest open one", "[metrics]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto t0 = test::k_t0;
  CHECK_THAT(daemon::render_metrics(store::read_metrics(db).value(), {}, t0),
             Catch::Contains("dispatchd_escalation_oldest_open_age_seconds 0\n"));
  using store::EscalationReason;
  const auto resolved = test::escalate(db, "w1", "1555", "a", EscalationReason::contract_failed, t0);
  const auto claimed = test::escalate(db, "w2", "1555", "b", EscalationReason::contract_failed, t0 + 10min);
  test::escalate(db, "w3", "1555", "c", EscalationReason::contract_failed, t0 + 20min);
  test::escalate(db, "w4", "1555", "d", EscalationReason::undecodable, t0 + 30min);
  REQUIRE(store::close_escalation(db, resolved, "ana", store::EscalationStatus::resolved, "done", t0 + 1h));
  REQUIRE(store::claim_escalation(db, claimed, "ana", t0 + 1h));
  const std::string text = daemon::render_metrics(store::read_metrics(db).value(), {}, t0 + 2h);
  CAPTURE(text);
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_escalations_waiting gauge\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_escalations_waiting{reason=\"contract_failed\",status=\"open\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_escalations_waiting{reason=\"contract_failed\",status=\"claimed\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_escalations_waiting{reason=\"undecodable\",status=\"open\"} 1\n"));
  CHECK_THAT(text, !Catch::Contains("status=\"resolved\""));
  CHECK_THAT(text, Catch::Contains("dispatchd_escalations_total{reason=\"contract_failed\"} 3\n"));
  // The oldest open or claimed one is the claimed one, opened at t0 + 10 min.
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_escalation_oldest_open_age_seconds gauge\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_escalation_oldest_open_age_seconds " + std::to_string((2h - 10min) / 1s) +
                                   "\n"));
}

TEST_CASE("metrics: the notifier's counters, only when notify_url is set", "[metrics]") {
  test::TempDir dir;
  const auto snapshot = empty_snapshot(dir);
  daemon::ProcessGauges gauges;
  CHECK_THAT(daemon::render_metrics(snapshot, gauges, test::k_t0), !Catch::Contains("dispatchd_notifications"));
  gauges.notifications = daemon::ProcessGauges::Notifications{.sent = 4, .retried = 2, .failed = 1, .pending = 3};
  const std::string text = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CAPTURE(text);
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_notifications_total counter\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_notifications_total{result=\"sent\"} 4\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_notifications_total{result=\"retried\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_notifications_total{result=\"failed\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_notifications_pending gauge\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_notifications_pending 3\n"));
}

TEST_CASE("metrics: billed tokens by kind and the cost of priced attempts, unpriced ones counted apart",
          "[metrics][cost]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  auto message = store::insert_inbound(db, {"whatsapp", "wamid.c", "1555", "1555", "hola", "{}"}, test::k_t0);
  REQUIRE(message);
  store::AttemptRecord attempt{.message_id = message->id,
                               .attempt = 1,
                               .provider = "openai",
                               .model = "gpt-5-mini",
                               .verdict = store::Verdict::invalid,
                               .latency_ms = 700,
                               .input_tokens = 78,
                               .output_tokens = 139,
                               .cached_input_tokens = 1408,
                               .cache_write_tokens = 0,
                               .reasoning_tokens = 512,
                               .cost_usd = 0.0015};
  REQUIRE(store::record_attempt(db, attempt, test::k_t0));
  attempt.attempt = 2;
  attempt.cost_usd = 0.00025;
  REQUIRE(store::record_attempt(db, attempt, test::k_t0));
  attempt.attempt = 3;
  attempt.model = "gpt-5";  // no price
  attempt.cost_usd.reset();
  REQUIRE(store::record_attempt(db, attempt, test::k_t0));
  const std::string text = daemon::render_metrics(store::read_metrics(db).value(), {}, test::k_t0);
  CAPTURE(text);
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_llm_tokens_total counter\n"));
  for (const auto& [kind, n] : {std::pair{"input", 156}, std::pair{"cached_input", 2816}, std::pair{"cache_write", 0},
                                std::pair{"output", 278}, std::pair{"reasoning", 1024}})
    CHECK_THAT(text, Catch::Contains("dispatchd_llm_tokens_total{provider=\"openai\",model=\"gpt-5-mini\",kind=\"" +
                                     std::string(kind) + "\"} " + std::to_string(n) + "\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_llm_cost_usd_total counter\n"));
  CHECK_THAT(text,
             Catch::Contains("dispatchd_llm_cost_usd_total{provider=\"openai\",model=\"gpt-5-mini\"} 0.001750000\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_llm_cost_usd_total{provider=\"openai\",model=\"gpt-5\"} 0.000000000\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_llm_unpriced_attempts_total{provider=\"openai\",model=\"gpt-5\"} 1\n"));
  CHECK_THAT(text,
             Catch::Contains("dispatchd_llm_unpriced_attempts_total{provider=\"openai\",model=\"gpt-5-mini\"} 0\n"));
}

TEST_CASE("metrics: catalog tool calls, their durations, and the MCP servers and pins when configured", "[metrics]") {
  test::TempDir dir;
  const auto snapshot = empty_snapshot(dir);
  daemon::ProcessGauges gauges;
  std::string text = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_tool_calls_total counter\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_tool_call_duration_seconds_count 0\n"));
  CHECK_THAT(text, !Catch::Contains("dispatchd_mcp_server_up"));  // no MCP servers

  gauges.tools.calls[{"mcp", "lookup_order", "orders", "get_order", "ok"}] = 3;
  gauges.tools.calls[{"http", "query_status", "", "", "tool_error"}] = 1;
  gauges.tools.durations.add(7'000);
  gauges.tools.durations.add(2'000'000);
  gauges.tools.servers = {{"orders", true}, {"crm", false}};
  gauges.tools.pins = {{"lookup_order", "orders", "get_order", true}, {"find_customer", "crm", "find", false}};
  text = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CAPTURE(text);
  CHECK_THAT(text, Catch::Contains("dispatchd_tool_calls_total{kind=\"mcp\",action=\"lookup_order\",server=\"orders\","
                                   "tool=\"get_order\",outcome=\"ok\"} 3\n"));
  CHECK_THAT(text, Catch::Contains(
                       "dispatchd_tool_calls_total{kind=\"http\",action=\"query_status\",outcome=\"tool_error\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_tool_call_duration_seconds_bucket{le=\"0.010000\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_tool_call_duration_seconds_bucket{le=\"5.000000\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_tool_call_duration_seconds_count 2\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_mcp_server_up{server=\"orders\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_mcp_server_up{server=\"crm\"} 0\n"));
  CHECK_THAT(
      text,
      Catch::Contains("dispatchd_mcp_action_pinned{action=\"lookup_order\",server=\"orders\",tool=\"get_order\"} 1\n"));
  CHECK_THAT(text,
             Catch::Contains("dispatchd_mcp_action_pinned{action=\"find_customer\",server=\"crm\",tool=\"find\"} 0\n"));
}

TEST_CASE("metrics: the media fetcher's counters, only when media.enabled", "[metrics]") {
  test::TempDir dir;
  const auto snapshot = empty_snapshot(dir);
  daemon::ProcessGauges gauges;
  CHECK_THAT(daemon::render_metrics(snapshot, gauges, test::k_t0), !Catch::Contains("dispatchd_media"));
  gauges.media =
      daemon::MediaCounters{.stored = 5, .refused = 2, .retried = 3, .store_errors = 1, .bytes = 4096, .purged = 7};
  const std::string text = daemon::render_metrics(snapshot, gauges, test::k_t0);
  CAPTURE(text);
  CHECK_THAT(text, Catch::Contains("# TYPE dispatchd_media_fetches_total counter\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_media_fetches_total{result=\"stored\"} 5\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_media_fetches_total{result=\"refused\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_media_fetches_total{result=\"retried\"} 3\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_media_fetches_total{result=\"store_error\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_media_bytes_total 4096\n"));
  CHECK_THAT(text, Catch::Contains("dispatchd_media_purged_total 7\n"));
}
