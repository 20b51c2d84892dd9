#pragma once
// Model attempts: one row per call to the model for a message, with what came back and
// the validator's verdict. Rows recorded before a crash count toward the re-ask budget.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/states.h"

namespace dispatchd::store {

struct AttemptRecord {
  std::int64_t message_id = 0;
  int attempt = 1;       // 1 for the first call, then one more per re-ask or tool step
  std::string provider;  // "openai" | "gemini" | "anthropic"
  std::string model;
  std::string request_summary;            // one line: turns, bytes, schema enforced (no secrets)
  std::optional<std::string> raw_output;  // the model's text; none when the call failed
  Verdict verdict = Verdict::invalid;
  std::string errors = "[]";               // the validator's errors, compact JSON array
  std::optional<std::string> error_class;  // first error code, or truncated/transport/...
  std::optional<std::int64_t> latency_ms;
  // The billed tokens, each in one column (llm/provider.h's Usage; migration 0010): none when
  // the call's usage is unknown.
  std::optional<std::int64_t> input_tokens;
  std::optional<std::int64_t> output_tokens;
  std::optional<std::string> finish_reason;
  std::optional<std::int64_t> cached_input_tokens;
  std::optional<std::int64_t> cache_write_tokens;
  std::optional<std::int64_t> reasoning_tokens;
  // USD at the prices in force now (llm/cost.h); none when unknown (no price for the model,
  // no rate for a kind of token it used, or no usage). Never 0 for "unknown".
  std::optional<double> cost_usd;
  // The customers' files the request carried (migration 0037): how many, and their bytes as
  // stored (before the request's base64).
  std::int64_t media_count = 0;
  std::int64_t media_bytes = 0;
};

// Stores the attempt and its 'attempt' audit event in one transaction. A second record
// with the same (message, attempt) is refused.
[[nodiscard]] Result<std::int64_t> record_attempt(Database& db, const AttemptRecord& attempt, Time now);

struct AttemptCounts {
  int total = 0;   // every attempt recorded (the next one is total + 1)
  int failed = 0;  // verdict invalid or error: what the re-ask budget counts
  std::optional<Verdict> last_verdict;
  std::optional<std::string> last_raw_output;
};

// What the message has used so far; attempts recorded before a crash count.
[[nodiscard]] Result<AttemptCounts> count_attempts(Database& db, std::int64_t message_id);

}  // namespace dispatchd::store
