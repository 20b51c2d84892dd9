#include "store/attempts.h"

#include "common/json_out.h"
#include "store/audit.h"
#include "store/internal/sql.h"

namespace dispatchd::store {

Result<std::int64_t> record_attempt(Database& db, const AttemptRecord& a, Time now) {
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    // The files' columns (migration 0037) only when the attempt carried some: an attempt
    // without files is the row the store wrote before them (their defaults are 0), so that a
    // history written for an upgrade test on an older schema needs no newer column.
    const bool files = a.media_count > 0 || a.media_bytes > 0;
    auto insert = Query::prepare(
        db, std::string("INSERT INTO attempts(message_id, attempt, provider, model, request_summary, raw_output,"
                        " verdict, errors, error_class, latency_ms, input_tokens, output_tokens, finish_reason,"
                        " created_at, cached_input_tokens, cache_write_tokens, reasoning_tokens, cost_usd") +
                (files ? ", media_count, media_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id"
                       : ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id"));
    if (!insert) return std::unexpected(insert.error());
    insert->bind(1, a.message_id).bind(2, a.attempt).bind(3, a.provider).bind(4, a.model).bind(5, a.request_summary);
    insert->bind(6, a.raw_output).bind(7, a.verdict).bind(8, a.errors).bind(9, a.error_class).bind(10, a.latency_ms);
    insert->bind(11, a.input_tokens).bind(12, a.output_tokens).bind(13, a.finish_reason).bind(14, format_time(now));
    insert->bind(15, a.cached_input_tokens).bind(16, a.cache_write_tokens).bind(17, a.reasoning_tokens);
    insert->bind(18, a.cost_usd);
    if (files) insert->bind(19, a.media_count).bind(20, a.media_bytes);
    auto inserted = insert->inserted_id();
    if (!inserted) return std::unexpected(inserted.error());
    const std::int64_t id = *inserted;
    JsonOut detail;
    detail.begin_object().field("attempt", a.attempt).field("provider", a.provider).field("model", a.model);
    detail.field("verdict", to_sql(a.verdict)).field_if_set("error_class", a.error_class).end_object();
    DISPATCHD_TRY(append_audit(db, {format_time(now), AuditKind::attempt, a.message_id, "dispatchd", detail.str()}));
    return id;
  });
}

Result<AttemptCounts> count_attempts(Database& db, std::int64_t message_id) {
  auto query =
      Query::prepare(db,
                     "SELECT count(*), coalesce(sum(CASE WHEN verdict IN ('invalid', 'error') THEN 1 ELSE 0 END), 0),"
                     " (SELECT verdict FROM attempts WHERE message_id = ?1 ORDER BY attempt DESC LIMIT 1),"
                     " (SELECT raw_output FROM attempts WHERE message_id = ?1 ORDER BY attempt DESC LIMIT 1)"
                     " FROM attempts WHERE message_id = ?1");
  if (!query) return std::unexpected(query.error());
  query->bind(1, message_id);
  auto row = query->step();
  if (!row) return std::unexpected(row.error());
  const auto last = query->optional_text(2);
  return AttemptCounts{static_cast<int>(query->integer(0)), static_cast<int>(query->integer(1)),
                       last ? from_sql<Verdict>(*last) : std::nullopt, query->optional_text(3)};
}

}  // namespace dispatchd::store
