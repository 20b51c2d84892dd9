#pragma once
// The agent's decision as a pure function: what to do next with a message, from what its
// latest step brought and where it stands. No I/O, no clock, no store: Run (agent.cpp)
// records each attempt, calls decide() and carries the Step out (store writes, the model,
// tools). tests/agent/decide_test.cpp holds it to the agent loop's cases (docs/agent.md), row by row.
//
//   latest      what it was                          step
//   ----------  -----------------------------------  ---------------------------------------
//   Typed       rule escalate                        Escalate undecodable {type}
//               rule reply                           QueueFixed (the rule's text to the sender)
//               rule ignore                          IgnoreType
//               rule model                           Ask (Run looks the model up instead)
//   Started     every attempt used before a restart  Escalate contract_failed {BudgetUsed}
//               else                                 Ask, with the resumed failed pair if any
//   Answered    invalid, budget left                 Ask with (the output, the validator's feedback)
//               invalid, the last attempt            Escalate contract_failed {OutOfAttempts};
//                                                    policy_violation when only the policy refused
//               valid reply or mcp act               Queue (an act: the tool call, its reply after)
//               valid reply or act needing approval  Propose needs_approval
//               valid reply or act with review flags Propose review_flags
//               valid escalate                       Escalate model_escalated (the output proposed)
//               valid ignore                         Ignore
//               valid http or mcp tool, steps left   RunTool (the URL, or the tool's arguments)
//               valid tool past the step limit       Escalate contract_failed {PastToolLimit}
//               a reply without text, a tool URL     Fail
//               that cannot be filled, an action
//               the catalog does not have
//   ProviderError truncated, blocked, refused,       like invalid; the pair: what came back and
//               no_text                              why it was not used
//               bad_response                         like invalid, without a pair
//               transport, rate_limited, server,     Postpone (provider_wait, or a longer
//               client, circuit_open                 Retry-After); at or past provider_deadline
//                                                    after arrival: Escalate provider_unavailable
//
// The budget: 1 + max_retries failed attempts (invalid or error verdicts), counted over
// every run of the message; valid tool calls do not use it.

#include <chrono>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "agent/context.h"
#include "catalog/catalog.h"
#include "llm/provider.h"
#include "store/inbox.h"
#include "store/states.h"
#include "validator/outbound.h"
#include "validator/validator.h"

namespace dispatchd::agent {

// What to do with a message of one type before any model call (Settings::type_rules).
enum class TypeAction { model, escalate, reply, ignore };
struct TypeRule {
  TypeAction action = TypeAction::model;
  std::string reply_text;  // TypeAction::reply: sent to the sender as it is
};

// The settings decide() reads (agent::Settings has them all).
struct Limits {
  int max_retries = 2;     // re-asks after the first attempt
  int max_tool_steps = 4;  // tool calls per message
  std::chrono::seconds provider_deadline{900};
  std::chrono::seconds provider_wait{30};
};

// Where the message stands, the latest step included.
struct Progress {
  int attempts = 0;    // attempts recorded for the message, earlier runs' too
  int failed = 0;      // of them invalid or error: what the budget counts
  int tool_steps = 0;  // tools this run has run
  store::Time received_at{};
  store::Time now{};
};

// What the latest step brought (Latest) is one of:

// The configuration decides the message's type (a rule other than `model`).
struct Typed {
  TypeRule rule;
  std::string type;
};
// A run begins; the model is to decide.
struct Started {
  std::optional<FailedPair> resumed;  // the failed pair of the last attempt a previous run recorded
};
// The model answered, and the attempt is recorded.
struct Answered {
  std::string output;          // as the model wrote it
  validator::Verdict verdict;  // the validator's, on `output`
};
// ...or an llm::ProviderError (recorded first when attempt_verdict() says it is an attempt).

using Latest = std::variant<Typed, Started, Answered, llm::ProviderError>;

// An escalation's detail is one of these; Run writes it as v_escalations.detail, the JSON
// keys named with each.

// {"attempts", "last_errors"}: the budget is used up.
struct OutOfAttempts {
  int attempts = 0;
  std::vector<validator::Finding> last_errors;  // the last attempt's, whatever failed
};
// {"why"}: every attempt was used before a restart.
struct BudgetUsed {};
// {"why", "action"}: the model kept calling tools past max_tool_steps.
struct PastToolLimit {
  std::string action;
};
// {"action"}: the model chose an escalate action.
struct ModelEscalated {
  std::string action;
};
// {"error_class", "error"}: the provider stayed down past provider_deadline.
struct ProviderDown {
  llm::ErrorClass error_class = llm::ErrorClass::transport;
  std::string error;
};
// {"type", "why"}: a type rule escalates, or an audio message has no transcript (`why` set).
struct TypeEscalated {
  std::string type;
  std::string why = {};  // "": the configuration escalates the type
};
using Detail = std::variant<OutOfAttempts, BudgetUsed, PastToolLimit, ModelEscalated, ProviderDown, TypeEscalated>;

// A reply the model chose, for the outbox: a message to the counterpart, or a tool call
// (an mcp act) with the reply that follows it when the action has one.
struct Reply {
  std::string action;
  std::string arguments;                    // the validated output (compact JSON)
  validator::Outbound outbound;             // a message; for a tool call, its follow-up's recipient
  std::optional<validator::ToolCall> tool;  // set for an mcp act
};

// The Step is one of:

// Ask the model (again).
struct Ask {
  std::optional<FailedPair> failed;  // shown to it; none on a first ask or after an unreadable answer
};
// What a tool step calls: an http tool's filled URL, or an mcp tool's arguments object.
struct HttpTarget {
  std::string url;
};
struct McpTarget {
  std::string arguments;  // compact JSON, the action's set fields under their argument names
};
// Run the read-only tool, then ask again with its answer (and no failed pair).
struct RunTool {
  std::string action;
  std::variant<HttpTarget, McpTarget> target;
  std::string call;  // the validated reply that asked for it
};
// The reply to the outbox, approved; the message is decided.
struct Queue {
  Reply reply;
};
// A type rule's fixed reply to the sender (action fixed_reply), like Queue.
struct QueueFixed {
  std::string type;
  std::string text;
};
// An escalation with the reply as its proposal for staff.
struct Propose {
  // needs_approval when a flag is requires_approval, else review_flags
  store::EscalationReason reason = store::EscalationReason::needs_approval;
  std::vector<std::string> flags;  // the review codes
  Reply reply;
};
// An escalation without a proposal to send.
struct Escalate {
  store::EscalationReason reason = store::EscalationReason::contract_failed;
  Detail detail;
  std::optional<std::string> proposed;  // the model's output shown to staff as the proposed action
};
// Done, nothing sent: the model chose an ignore action.
struct Ignore {
  std::string action;
};
// Done, nothing sent: a type rule.
struct IgnoreType {
  std::string type;
};
// The provider is down: the message waits until `until`, then is taken again.
struct Postpone {
  store::Time until{};
  std::chrono::seconds wait{0};
  llm::ErrorClass error_class = llm::ErrorClass::transport;
  std::string error;
};
// A permanent error: the message waits out its lease.
struct Fail {
  std::string error;
};
using Step = std::variant<Ask, RunTool, Queue, QueueFixed, Propose, Escalate, Ignore, IgnoreType, Postpone, Fail>;

// `catalog`: the run's; `sender`: the message's counterpart (the only recipient).
Step decide(const Latest& latest, const Progress& progress, const Limits& limits, const catalog::Catalog& catalog,
            const std::string& sender);

// Whether a provider error is an attempt, and its verdict: a documented answer that cannot
// be used (truncated, blocked, refused, no_text) is invalid; a body that is not the
// documented JSON (bad_response) is an error; no answer at all (transport, rate_limited,
// server, client) is no attempt (nullopt).
std::optional<store::Verdict> attempt_verdict(llm::ErrorClass error_class);

// The one error an attempt that ended in `error` records, and an escalation names.
validator::Finding finding_of(const llm::ProviderError& error);

}  // namespace dispatchd::agent
