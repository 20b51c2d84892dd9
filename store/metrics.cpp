#include "store/metrics.h"

#include "store/internal/sql.h"

namespace dispatchd::store {

// The counts come from metric_counts, metric_latency and metric_usage, which triggers keep as
// rows change (migrations 0008 and 0010): a scrape reads a few dozen rows whatever the size of
// the history. Each label set has a row per shard (0015: one per PostgreSQL connection, one in
// all on SQLite), summed here.
Result<MetricsSnapshot> read_metrics(Database& db) {
  MetricsSnapshot m;
  auto counts = Query::prepare(db,
                               "SELECT metric, label1, label2, CAST(sum(n) AS BIGINT) FROM metric_counts"
                               " GROUP BY 1, 2, 3 HAVING sum(n) != 0 ORDER BY 1, 2, 3");
  if (!counts) return std::unexpected(counts.error());
  while (true) {
    auto row = counts->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    const std::string metric = counts->text(0);
    const std::int64_t n = counts->integer(3);
    if (metric == "messages") {
      auto outcome = counts->state<Outcome>(2);
      if (!outcome) return std::unexpected(outcome.error());
      m.messages.push_back({counts->text(1), *outcome, n});
    } else if (metric == "attempts") {
      auto verdict = counts->state<Verdict>(1);
      if (!verdict) return std::unexpected(verdict.error());
      m.attempts.push_back({*verdict, counts->text(2), n});
    } else if (metric == "escalations") {
      auto reason = counts->state<EscalationReason>(1);
      if (!reason) return std::unexpected(reason.error());
      auto status = counts->state<EscalationStatus>(2);
      if (!status) return std::unexpected(status.error());
      m.escalations.push_back({*reason, *status, n});
    } else if (metric == "actions") {
      auto status = counts->state<ActionStatus>(1);
      if (!status) return std::unexpected(status.error());
      m.actions.push_back({*status, n});
    } else if (metric == "reasks") {
      m.reasks = n;
    }
  }

  auto latency = Query::prepare(db,
                                "SELECT provider, model, bucket, CAST(sum(n) AS BIGINT),"
                                " CAST(sum(sum_ms) AS BIGINT) FROM metric_latency GROUP BY 1, 2, 3 ORDER BY 1, 2, 3");
  if (!latency) return std::unexpected(latency.error());
  while (true) {
    auto row = latency->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    const std::string provider = latency->text(0);
    const std::string model = latency->text(1);
    if (m.latency.empty() || m.latency.back().provider != provider || m.latency.back().model != model)
      m.latency.push_back({provider, model, {}, 0, 0});
    LatencyHistogram& h = m.latency.back();
    const auto bucket = static_cast<std::size_t>(latency->integer(2));
    const std::int64_t n = latency->integer(3);
    h.count += n;
    h.sum_ms += latency->integer(4);
    // Cumulative: an attempt in bucket i is also under every larger bound.
    for (std::size_t i = bucket; i < k_latency_buckets_ms.size(); ++i) h.cumulative[i] += n;
  }

  auto usage = Query::prepare(db,
                              "SELECT provider, model, CAST(sum(input_tokens) AS BIGINT),"
                              " CAST(sum(cached_input_tokens) AS BIGINT), CAST(sum(cache_write_tokens) AS BIGINT),"
                              " CAST(sum(output_tokens) AS BIGINT), CAST(sum(reasoning_tokens) AS BIGINT),"
                              " sum(cost_usd), CAST(sum(priced) AS BIGINT), CAST(sum(unpriced) AS BIGINT)"
                              " FROM metric_usage GROUP BY 1, 2 ORDER BY 1, 2");
  if (!usage) return std::unexpected(usage.error());
  while (true) {
    auto row = usage->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    m.usage.push_back({usage->text(0), usage->text(1), usage->integer(2), usage->integer(3), usage->integer(4),
                       usage->integer(5), usage->integer(6), usage->optional_real(7).value_or(0), usage->integer(8),
                       usage->integer(9)});
  }

  auto waiting =
      Query::prepare(db, "SELECT count(*), min(received_at) FROM inbox WHERE state IN ('received', 'processing')");
  if (!waiting) return std::unexpected(waiting.error());
  auto row = waiting->step();
  if (!row) return std::unexpected(row.error());
  m.inbox_waiting = waiting->integer(0);
  m.oldest_waiting_since = waiting->optional_text(1);

  // The escalations_status index (status, created_at) answers this from two index seeks.
  auto open = Query::prepare(db, "SELECT min(created_at) FROM escalations WHERE status IN ('open', 'claimed')");
  if (!open) return std::unexpected(open.error());
  auto oldest = open->step();
  if (!oldest) return std::unexpected(oldest.error());
  m.oldest_open_escalation_since = open->optional_text(0);

  // A few rows at most: the conversations held until staff close their escalation.
  auto holds = Query::prepare(db, "SELECT reason, count(*) FROM conversation_holds GROUP BY reason ORDER BY reason");
  if (!holds) return std::unexpected(holds.error());
  while (true) {
    auto hold = holds->step();
    if (!hold) return std::unexpected(hold.error());
    if (!*hold) break;
    auto reason = holds->state<EscalationReason>(0);
    if (!reason) return std::unexpected(reason.error());
    m.conversations_held.push_back({*reason, holds->integer(1)});
  }
  return m;
}

}  // namespace dispatchd::store
