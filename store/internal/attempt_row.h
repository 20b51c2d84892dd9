#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: v_attempts read into an AttemptRow (store/views.h), shared by the
// staff reads (views.cpp) and the trail (trail.cpp) so that both show the same columns.

#include "store/internal/sql.h"
#include "store/views.h"

namespace dispatchd::store {

// The select list, in AttemptRow's order; a query goes on with "FROM v_attempts ...".
// Columns after these are the caller's own (read_attempt reads columns 0 to 17).
inline constexpr const char* k_attempt_columns =
    "SELECT attempt, provider, model, raw_output, verdict, errors, error_class, latency_ms, input_tokens,"
    " output_tokens, finish_reason, created_at, cached_input_tokens, cache_write_tokens, reasoning_tokens, cost_usd,"
    " media_count, media_bytes ";

// Fails only on a verdict this dispatchd does not know (Query::state).
[[nodiscard]] Result<AttemptRow> read_attempt(const Query& q);

}  // namespace dispatchd::store
