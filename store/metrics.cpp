#include "store/metrics.h"

#include "store/internal/sql.h"

namespace dispatchd::store {
namespace {

Result<std::vector<LabeledCount>> grouped(Database& db, std::string_view sql, int labels) {
  auto query = Query::prepare(db, sql);
  if (!query) return std::unexpected(query.error());
  std::vector<LabeledCount> out;
  while (true) {
    auto row = query->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    LabeledCount count;
    for (int i = 0; i < labels; ++i) count.labels.push_back(query->text(i));
    count.count = query->integer(labels);
    out.push_back(std::move(count));
  }
}

}  // namespace

Result<MetricsSnapshot> read_metrics(Database& db) {
  MetricsSnapshot m;
  auto messages = grouped(db, "SELECT channel, outcome, count(*) FROM inbox GROUP BY 1, 2 ORDER BY 1, 2", 2);
  if (!messages) return std::unexpected(messages.error());
  m.messages = std::move(*messages);
  auto attempts =
      grouped(db, "SELECT verdict, coalesce(error_class, ''), count(*) FROM attempts GROUP BY 1, 2 ORDER BY 1, 2", 2);
  if (!attempts) return std::unexpected(attempts.error());
  m.attempts = std::move(*attempts);
  auto escalations = grouped(db, "SELECT reason, status, count(*) FROM escalations GROUP BY 1, 2 ORDER BY 1, 2", 2);
  if (!escalations) return std::unexpected(escalations.error());
  m.escalations = std::move(*escalations);
  auto actions = grouped(db, "SELECT status, count(*) FROM actions GROUP BY 1 ORDER BY 1", 1);
  if (!actions) return std::unexpected(actions.error());
  m.actions = std::move(*actions);
  auto reasks = db.query_int("SELECT count(*) FROM attempts WHERE attempt > 1");
  if (!reasks) return std::unexpected(reasks.error());
  m.reasks = *reasks;

  std::string buckets;
  for (const auto bound : k_latency_buckets_ms) {
    buckets += ", sum(latency_ms <= " + std::to_string(bound) + ")";
  }
  auto latency = Query::prepare(db, "SELECT provider, model, count(*), sum(latency_ms)" + buckets +
                                        " FROM attempts WHERE latency_ms IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2");
  if (!latency) return std::unexpected(latency.error());
  while (true) {
    auto row = latency->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    LatencyHistogram h{latency->text(0), latency->text(1), {}, latency->integer(2), latency->integer(3)};
    for (std::size_t i = 0; i < k_latency_buckets_ms.size(); ++i)
      h.cumulative[i] = latency->integer(4 + static_cast<int>(i));
    m.latency.push_back(std::move(h));
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
  return m;
}

}  // namespace dispatchd::store
