#pragma once
// Offline replay: what would a catalog change have done to past traffic? Every recorded
// model output is judged again by the validator against a (new) catalog, with the context
// the agent gave it (the message's sender as the only allowed recipient, its text as the
// grounding source: agent/agent.cpp calls validator::validate(catalog, output, {sender,
// text}) with default limits, and so does recheck()). No model is called; nothing is
// written to the database.
//
// An attempt's verdict is "valid" when the validator accepted the output (recorded
// verdicts `valid` and `review`: a review flag routes a valid reply to staff, it does not
// refuse it) and "refused" otherwise. Attempts that carry no verdict of the validator are
// not re-checked: no raw output (a provider error), or an answer the agent refused because
// of how the provider ended it (cut off at the output limit: finish reason `length`,
// `MAX_TOKENS` or `max_tokens`; `blocked`, `refused`, `no_text`), whatever its text says.

#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "store/database.h"
#include "store/error.h"
#include "store/tools/replay.h"
#include "validator/validator.h"

namespace dispatchd::replay {

enum class Flip { unchanged, valid_to_refused, refused_to_valid };
const char* to_string(Flip flip);

// One recorded attempt judged again. `checked` is false for the attempts described above,
// which are then neither unchanged nor flipped.
struct Recheck {
  bool checked = false;
  bool was_valid = false;
  validator::Verdict verdict;  // the new one, when checked
  std::string action;          // the action the output names ("" when none can be read)
  Flip flip = Flip::unchanged;
};

// Pure; safe on any thread with a shared catalog.
Recheck recheck(const catalog::Catalog& catalog, const store::RecordedMessage& message,
                const store::RecordedAttempt& attempt);

// Which messages: those received on `since` (YYYY-MM-DD, UTC) or later, oldest first; the
// first `limit` of them; then `sample` of those, chosen by a seeded hash of the message id
// (the messages whose SplitMix64(id ^ seed) is smallest): the same database, window and
// seed always give the same sample, and a message's chance does not depend on the order
// or number of the others. Only messages with recorded attempts count.
struct Selection {
  std::optional<std::string> since;
  std::optional<std::int64_t> limit;
  std::optional<std::int64_t> sample;
  std::uint64_t seed = 1;
};

// Calls `visit` for each message of the selection, in the order described above, each with
// its recorded attempts (online replay takes the same messages as offline replay).
[[nodiscard]] std::expected<void, store::Error> for_each_selected(
    store::Database& db, const Selection& selection, const std::function<void(const store::RecordedMessage&)>& visit);

// A past reply whose verdict changes.
struct Change {
  std::int64_t message_id = 0;
  std::string provider_message_id;
  std::string channel;
  std::string received_at;
  std::int64_t attempt = 0;
  std::string action;
  Flip flip = Flip::valid_to_refused;
  std::string recorded_verdict;                     // v_attempts.verdict
  std::vector<validator::Finding> errors;           // the new errors (valid -> refused)
  std::vector<validator::Finding> recorded_errors;  // read from v_attempts.errors (refused -> valid)
  std::vector<validator::Finding> review;           // the new review flags (refused -> valid)
};

struct Counts {
  std::int64_t checked = 0;
  std::int64_t unchanged = 0;
  std::int64_t valid_to_refused = 0;
  std::int64_t refused_to_valid = 0;
};

struct Summary {
  std::int64_t messages = 0;     // messages replayed
  std::int64_t attempts = 0;     // their recorded attempts
  std::int64_t not_checked = 0;  // attempts without a validator verdict (see above)
  Counts total;
  std::map<std::string, Counts> per_action;  // by the action each output names
};

struct Report {
  std::string catalog;  // what it was replayed against (a path or a name), for the header
  Selection selection;
  Summary summary;
  std::vector<Change> changes;  // in received_at order, then attempt
};

// Reads the recorded attempts page by page (store/tools/replay.h) and re-checks each one.
// Memory: the changes, plus the sampled messages when `sample` is set.
[[nodiscard]] std::expected<Report, store::Error> run_offline(store::Database& db, const catalog::Catalog& catalog,
                                                              const Selection& selection);

// The report for people: a summary table, the counts per action, then each change with
// its message_id, provider id and errors. Dates as stored (ISO 8601 UTC).
std::string to_markdown(const Report& report);
// The same content for programs (docs/cli.md, `dispatchctl replay`).
std::string to_json(const Report& report);

}  // namespace dispatchd::replay
