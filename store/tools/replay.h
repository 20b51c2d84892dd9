#pragma once
// Recorded model attempts with their message, read for `dispatchctl replay`: every attempt
// the agent recorded, with what the validator needs to judge its raw output again (the
// message's sender and text, exactly as the agent passed them), in received_at order.
//
// Read through the documented views (v_messages, v_attempts) in keyset pages: first the
// messages' keys in order, then their attempts in small batches. Each call is one short
// read, so a replay of a large history never holds a read snapshot for long (which would
// keep the WAL from being checkpointed while the daemon writes).

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/states.h"

namespace dispatchd::store {

struct RecordedAttempt {
  std::int64_t attempt = 0;
  std::string provider;
  std::string model;
  std::optional<std::string> raw_output;  // none when the call returned no text
  Verdict verdict = Verdict::invalid;     // as recorded
  std::string errors;                     // the recorded errors, JSON array
  std::optional<std::string> error_class;
  std::optional<std::string> finish_reason;
};

struct RecordedMessage {
  std::int64_t id = 0;  // v_messages.message_id
  std::string channel;
  std::string provider_message_id;
  std::string sender;  // the counterpart, as the agent's validator context has it
  std::string text;    // the inbound text, the agent's grounding source
  std::string received_at;
  std::vector<RecordedAttempt> attempts;  // at least one, in attempt order
};

// A message's place in received_at order.
struct ReplayKey {
  std::string received_at;
  std::int64_t message_id = 0;
};

struct ReplayPage {
  std::optional<std::string> since;  // "YYYY-MM-DD": messages received that UTC day or later
  std::optional<ReplayKey> after;    // keyset: only messages after this one
  std::int64_t messages = 10000;     // at most this many keys
};

// The keys of the next messages, oldest first (received_at, then id), whether or not they
// have attempts; an empty result is the end. Each page seeks the index on (received_at, id)
// (migration 0011) to its first key and reads on in order: no scan, no sort.
// REQUIRES: page.messages > 0.
[[nodiscard]] Result<std::vector<ReplayKey>> replay_keys(Database& db, const ReplayPage& page);

// The messages of `keys` that have recorded attempts, each with all of them, in the order of
// `keys` (a message without attempts is left out). Everything is read at once: pass a few
// hundred keys at a time.
[[nodiscard]] Result<std::vector<RecordedMessage>> recorded_attempts(Database& db, std::span<const ReplayKey> keys);

// ---- Online replay and eval: a scratch database the agent loop runs in ----
//
// A scratch database is a copy of the live one (store/tools/backup.h) or a fresh one (eval),
// never the live file. prepare_scratch() turns it into a replay run in one transaction:
//   - replay_progress: one row per chosen message, in replay order, with the decision
//     recorded for it before the run (its "old" decision) and its status in this run
//     (pending -> decided | failed);
//   - replay_marks: the first action and escalation ids the run may create, so that the new
//     decision is told from the recorded one;
//   - the chosen messages' recorded attempts are deleted (the agent counts them against its
//     re-ask budget) and the messages are set back to `received`; every other unfinished
//     message is set to `done` (parked), so that the agent takes the chosen ones only.
// Their actions and escalations stay: the conversation history the agent reads (earlier
// messages and the replies that were *sent*) is the recorded one, and a new reply is only
// ever `approved` in the scratch outbox: no connector runs against a scratch database.

// What a message's decision was: reply (an action of the agent's in the outbox), escalate
// (an escalation the agent opened; send_failed and delivery_unknown come after a decision
// and do not count), ignore, or none (no decision: pending, failed). Stored as its text in
// replay_progress.old_kind.
enum class DecisionKind { none, reply, escalate, ignore };

template <>
struct SqlNames<DecisionKind> {
  static constexpr std::array<std::pair<DecisionKind, std::string_view>, 4> table{{
      {DecisionKind::none, "none"},
      {DecisionKind::reply, "reply"},
      {DecisionKind::escalate, "escalate"},
      {DecisionKind::ignore, "ignore"},
  }};
};

// A message's decision as the store holds it. `output` is the last accepted model output
// (verdict valid or review), "" when none.
struct StoredDecision {
  DecisionKind kind = DecisionKind::none;
  std::string action;                      // the outbox action's name, "" when none
  std::string recipient;                   // the outbox action's recipient, "" when none
  std::optional<EscalationReason> reason;  // of an escalate decision
  std::string output;
};

// A message's place in the run (replay_progress.status).
enum class ProgressStatus { pending, decided, failed };

template <>
struct SqlNames<ProgressStatus> {
  static constexpr std::array<std::pair<ProgressStatus, std::string_view>, 3> table{{
      {ProgressStatus::pending, "pending"},
      {ProgressStatus::decided, "decided"},
      {ProgressStatus::failed, "failed"},
  }};
};

struct ProgressRow {
  std::int64_t seq = 0;
  std::int64_t message_id = 0;
  std::string channel;
  std::string provider_message_id;
  std::string received_at;
  ProgressStatus status = ProgressStatus::pending;
  std::string detail;  // why it failed
  StoredDecision recorded;
};

// One attempt of the run (the chosen messages' attempts are all new after prepare_scratch).
struct AttemptStat {
  std::int64_t attempt = 0;
  Verdict verdict = Verdict::invalid;
  std::optional<std::int64_t> latency_ms;
  std::optional<std::int64_t> input_tokens;
  std::optional<std::int64_t> output_tokens;
  std::optional<double> cost_usd;  // as recorded (migration 0010): none when unpriced
};

// True when `db` holds a prepared replay run.
[[nodiscard]] Result<bool> is_replay_scratch(Database& db);

// Prepares the run described above for `message_ids` (replay order). replay_progress and
// replay_marks come from the scratch schema: the files of `migrations_root`/replay/<engine>/,
// named and read as migrations are (store/migrations.h) and run in order in the same
// transaction; schema_migrations does not list them (they are a run's, not the schema's).
// REQUIRES: !is_replay_scratch.
[[nodiscard]] Result<void> prepare_scratch(Database& db, const std::string& migrations_root,
                                           std::span<const std::int64_t> message_ids);

// Before a resumed run: a pending message whose decision is stored becomes decided; every
// other message not decided (pending or failed, possibly left half-way by a crash: its new
// attempts are deleted) is set back to `received` and pending. Returns how many remain.
[[nodiscard]] Result<std::int64_t> resume_scratch(Database& db);

// How many messages of the run are pending.
[[nodiscard]] Result<std::int64_t> pending_count(Database& db);

[[nodiscard]] Result<std::vector<ProgressRow>> replay_progress(Database& db);
[[nodiscard]] Result<void> mark_progress(Database& db, std::int64_t message_id, ProgressStatus status,
                                         const std::string& detail);

// The decision the run made for `message_id` (rows from replay_marks on).
[[nodiscard]] Result<StoredDecision> new_decision(Database& db, std::int64_t message_id);
[[nodiscard]] Result<std::vector<AttemptStat>> attempt_stats(Database& db, std::int64_t message_id);

// Eval: a labelled case stored in a fresh scratch database as a conversation of its own:
// the history (each turn a `done` inbound message, or a reply marked sent, one second
// apart) and then the message itself, `received`. Returns the message id.
struct CaseTurn {
  bool from_us = false;
  std::string text;
};
struct EvalCase {
  std::string channel;
  std::string sender;
  std::string text;
  std::vector<CaseTurn> history;
  std::string conversation_id;  // unique per case
  std::string received_at;      // format_time; history turns are stored before it
};
[[nodiscard]] Result<std::int64_t> insert_case(Database& db, const EvalCase& c);

}  // namespace dispatchd::store
