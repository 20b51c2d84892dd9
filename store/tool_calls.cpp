#include "store/tool_calls.h"

#include "common/json_out.h"
#include "store/audit.h"
#include "store/internal/sql.h"

namespace dispatchd::store {

Result<std::int64_t> record_tool_call(Database& db, const ToolCallRecord& c, Time now) {
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    auto insert = Query::prepare(db,
                                 "INSERT INTO tool_calls(message_id, attempt, action, kind, server, tool, outcome,"
                                 " duration_ms, result_bytes, created_at, action_id) VALUES (?1,"
                                 " CASE WHEN ?2 > 0 THEN ?2 ELSE coalesce((SELECT max(attempt) FROM attempts"
                                 " WHERE message_id = ?1), 1) END, ?3,?4,?5,?6,?7,?8,?9,?10,?11) RETURNING id");
    if (!insert) return std::unexpected(insert.error());
    insert->bind(1, c.message_id).bind(2, c.attempt).bind(3, c.action).bind(4, to_sql(c.kind)).bind(5, c.server);
    insert->bind(6, c.tool).bind(7, to_sql(c.outcome)).bind(8, c.duration_ms).bind(9, c.result_bytes);
    insert->bind(10, format_time(now)).bind(11, c.action_id);
    auto inserted = insert->inserted_id();
    if (!inserted) return std::unexpected(inserted.error());
    JsonOut detail;
    detail.begin_object().field("action", c.action).field("kind", to_sql(c.kind)).field_if_set("server", c.server);
    detail.field("tool", c.tool).field("outcome", to_sql(c.outcome)).field("duration_ms", c.duration_ms);
    detail.field("result_bytes", c.result_bytes).field_if_set("action_id", c.action_id).end_object();
    DISPATCHD_TRY(append_audit(db, {format_time(now), AuditKind::tool_call, c.message_id, "dispatchd", detail.str()}));
    return *inserted;
  });
}

}  // namespace dispatchd::store
