#pragma once
// Eval: a labelled set of messages run through the agent loop (replay/online.h, the same
// path as online replay) in a fresh scratch database, scored against the labels.
//
// The set (JSON Lines, UTF-8): one JSON object per line; empty lines are skipped.
//   {"id": "es-01",                       optional, a name for the report (<= 200 bytes)
//    "channel": "whatsapp",                a channel's name, one of those the caller gives
//    "sender": "34600111222",              the counterpart (the only allowed recipient)
//    "text": "...",                        the inbound message (<= 16 KiB)
//    "history": [{"from": "customer" | "agent", "text": "..."}, ...],  optional, oldest
//                                          first, <= 20 turns, starting with the customer
//    "expected_action": "enviar_mensaje",  the catalog action the model must choose, and
//    "expected_fields": {"prioridad": "alta", ...}   optional: fields the output must
//                                          have with these values (strings; an output value
//                                          that is not a string is compared as its JSON text)
//    "must_escalate": true}                instead of expected_action: the message must end
//                                          in an escalation (any reason)
// Exactly one of expected_action and must_escalate (true). No other keys. Bounds: 1 MiB per
// line, 1000 cases, 4 MiB in all, JSON nesting depth 8. A line that breaks any of this is an
// error naming its line number; nothing runs then.
//
// Scoring. A case is correct when: must_escalate: the decision is an escalation;
// expected_action: the last accepted output names that action (whatever then happened to
// it: a proposal awaiting approval counts) and every expected field has its value.
// accuracy = correct cases / all cases. Per field: among the cases that expect it, the
// share where it matched ("action" and "must_escalate" are scored as fields too).

#include <csignal>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "replay/online.h"
#include "store/tools/replay.h"

namespace dispatchd::replay {

struct LabelledCase {
  int line = 0;
  std::string id;  // the "id", else "line N"
  std::string channel;
  std::string sender;
  std::string text;
  std::vector<store::CaseTurn> history;
  std::optional<std::string> expected_action;
  std::vector<std::pair<std::string, std::string>> expected_fields;
  bool must_escalate = false;
};

struct SetError {
  int line = 0;  // 0: the set as a whole
  std::string message;
};

// `channels`: the names a case's "channel" may take (connectors/registry.h's kinds).
[[nodiscard]] std::expected<std::vector<LabelledCase>, SetError> parse_set(std::string_view text,
                                                                           std::span<const std::string_view> channels);

struct CaseResult {
  LabelledCase label;
  MessageResult run;  // the decision (run.replayed) and attempts
  bool correct = false;
  std::vector<std::string> wrong;  // "action", "field NAME", "must_escalate", "not run"
};

struct FieldScore {
  std::string name;
  std::int64_t right = 0;
  std::int64_t total = 0;
};

struct EvalReport {
  std::string set;  // the set's path, for the header
  std::string catalog;
  std::string model;
  bool partial = false;  // interrupted: cases not run count as wrong
  std::vector<CaseResult> cases;
  std::vector<FieldScore> fields;  // "action" first, then in order of first appearance
  std::int64_t correct = 0;
  double accuracy = 0;  // correct / cases (0 for an empty set)
  RunSummary summary;   // validity, re-asks, tokens, cost, latency (replay/online.h)
};

// Runs `cases` in a fresh database at `scratch_path` (must not exist; migrated from
// `migrations_dir`), received now, each a conversation of its own. The caller removes the
// scratch file. An error names what failed (the store, the transport).
[[nodiscard]] std::expected<EvalReport, std::string> run_eval(const std::vector<LabelledCase>& cases,
                                                              const ModelOptions& options,
                                                              const std::string& scratch_path,
                                                              const std::string& migrations_dir,
                                                              const RunHooks& hooks = {});

std::string eval_markdown(const EvalReport& report);
std::string eval_json(const EvalReport& report);

}  // namespace dispatchd::replay
