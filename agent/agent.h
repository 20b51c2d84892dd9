#pragma once
// The agent loop: for each inbound message, ask the model for ONE catalog action, validate
// it, re-ask at most `max_retries` times with the exact errors, and act on the verdict:
//
//   a type with a rule      -> decided by the rule instead (Settings::type_rules), no model
//                              call: escalate (undecodable, naming the type), a fixed reply
//                              (outbox, like a model reply) or ignore (done, ignored)
//   a held conversation     -> done (ignored), no model call, the hold's escalation named
//   a runaway conversation  -> escalation conversation_limit or suspected_loop, which holds
//                              it (agent/runaway.h, Settings::runaway), no model call
//
//   reply (auto)            -> outbox (approved), message decided; done when the send is
//                              (while the counterpart's reply window is closed, a
//                              free-form reply is a policy error: set_reply_windows)
//   reply needing approval  -> escalation needs_approval / review_flags with the proposal
//   or flagged for review
//   escalate                -> escalation model_escalated, message done
//   ignore                  -> message done (ignored)
//   http or mcp lookup tool -> the tool runs, its answer goes back to the model (bounded
//                              steps); each call is recorded (v_tool_calls)
//   still invalid at the end-> escalation contract_failed (policy_violation when only the
//                              policy stage refused), with every attempt in v_attempts
//   spend budget closed     -> (llm.budget, agent/budget.h; checked before every model
//                              call) the turn waits until the next UTC day (postponed), or
//                              escalates budget_exhausted (Budget::when_spent)
//   provider down           -> the message waits (postponed) and is taken again; past
//                              provider_deadline after it arrived: provider_unavailable
//   decision not stored     -> (a failed COMMIT, e.g. a full disk) the message is handed
//                              back and taken again after a pause, not when its lease ends
//                              (store::Redo: Settings::store_pause doubling to 30 s)
//   take not stored         -> the same, for a message taken in a round whose COMMIT failed
//                              (it may have been stored in that round, and be gone with it):
//                              the run ends at once and writes nothing more
//
// What to do at each step is decide() (agent/decide.h), a pure function tested as a table;
// the Run carries its Step out against the store, the provider and the tools.
// Transport failures are retried inside the provider stack (llm::RetryingProvider) and
// never count as attempts. Every attempt is recorded before the next step, so a restart
// resumes the budget. A decision is reported once it is durable (store::Redo::commit_then).
// Messages of one conversation go in inbox order (store::take_turn), in turns with bursts;
// different conversations run concurrently, at most `max_in_flight` at once.
//
// Threading: everything runs on the io_context's thread; the Database is used only there.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "agent/budget.h"
#include "agent/decide.h"
#include "agent/runaway.h"
#include "catalog/catalog.h"
#include "common/reply_window.h"
#include "llm/cost.h"
#include "llm/provider.h"
#include "llm/providers.h"
#include "net/http.h"
#include "store/database.h"
#include "store/inbox.h"
#include "store/tool_calls.h"

namespace boost::asio {
class io_context;
}
namespace dispatchd::mcp {
class ToolCaller;
}

namespace dispatchd::agent {

struct Settings {
  int max_retries = 2;     // re-asks after the first attempt
  int max_tool_steps = 4;  // tool calls per message
  std::size_t history_messages = 10;
  std::size_t max_in_flight = 8;                // messages in progress (llm.max_concurrency)
  std::chrono::seconds lease{900};              // a taken message's lease
  std::chrono::seconds provider_deadline{900};  // after arrival, then provider_unavailable
  std::chrono::seconds provider_wait{30};       // a message waits this long after a provider failure
  // Bursts (store/turns.h): a conversation's messages this close together are answered as
  // one turn, taken once none came for burst_quiet or burst_max after the first; a
  // message that comes while the turn is being decided joins it and the model is asked
  // again, at most max_turn_restarts times. burst_quiet 0: one turn per message.
  std::chrono::milliseconds burst_quiet{0};
  std::chrono::milliseconds burst_max{0};
  int max_turn_restarts = 2;
  // Runaway conversations (agent/runaway.h): checked before the model is asked about a
  // turn; past them the conversation is held (escalated once, not answered until staff
  // close that escalation). Off unless set (the daemon sets agent.limits).
  std::optional<RunawayLimits> runaway;
  // After a decision the store lost (its round's COMMIT failed, e.g. a full disk), the
  // agent takes nothing for this long, doubled while it keeps happening, at most 30 s
  // (exponential_backoff, common/backoff.h), on the agent's monotonic clock.
  std::chrono::milliseconds store_pause{1000};
  std::size_t max_tool_bytes = 8 * 1024;
  std::chrono::milliseconds tool_timeout{10'000};
  std::string worker = "dispatchd";  // the lease owner
  // channel -> message type (store::Leased::type) -> rule; a message with no rule, or a
  // `model` one, goes to the model.
  std::map<std::string, std::map<std::string, TypeRule>> type_rules;
  // llm.prices: each attempt's cost is computed with these when it is recorded (llm/cost.h);
  // a model not in it records no cost.
  llm::PriceTable prices;
  // media.wait_s: a turn whose files are still downloading waits for them at most this long
  // after they were recorded (agent/media_wait.h); 0: the model is asked at once.
  std::chrono::seconds media_wait{0};
  // The provider dialects a model call may go to: the primary, then llm.fallbacks (a router
  // may send any call to any of them). A message's stored image, document (PDF) and audio
  // files go to the model with it when every one of them reads the file (llm/media.h,
  // agent/context.h's choose_media); the model reads a line about each other file. Empty:
  // no file goes, the model reads the lines.
  std::vector<llm::ProviderKind> model_dialects;
  // llm.budget: read from the store's spend counters (store/spend.h) before every model call,
  // on the UTC day of the agent's clock; none configured: no check.
  Budget budget;
};

// The catalog and prompts, immutable; replaced whole on reload (a run keeps the one it
// started with).
struct Setup {
  catalog::Catalog catalog;
  std::string system;  // business instructions + the catalog's prompt text
  std::shared_ptr<const llm::OutputSchema> schema;
  std::optional<std::string> holding_reply;  // sent once to the customer on escalation
};

// `business_prompt` is the system_prompt_file's text (may be empty).
std::shared_ptr<const Setup> make_setup(catalog::Catalog catalog, const std::string& business_prompt,
                                        std::optional<std::string> holding_reply = std::nullopt);

// What became of one message (for logs, metrics and tests).
enum class Outcome {
  queued,       // a reply is in the outbox
  escalated,    // an escalation is open
  ignored,      // done, nothing sent
  postponed,    // the provider failed, or the spend budget is closed: the message waits and is taken again
  error,        // a permanent failure: the message waits out its lease
  not_stored,   // the decision was lost (a failed COMMIT, a busy or full store): the message is
                // taken again after a pause (Settings::store_pause)
  handed_over,  // this run's lease ran out and another take has the message (another instance,
                // store::hold_lease): nothing more of this run was stored; the taker decides
};
std::string_view to_string(Outcome outcome);

struct Decision {
  std::int64_t message_id = 0;  // the turn's first message
  std::size_t messages = 1;     // the messages the decision answers (a turn's)
  Outcome outcome = Outcome::error;
  std::string detail;  // the escalation reason, the action, or the error
  int attempts = 0;    // attempts recorded for the message so far
};

// A channel's reply window for a counterpart at `now`: (channel as the store names it,
// counterpart, now) -> the window, nullopt when the channel has none.
using ReplyWindowLookup = std::function<std::optional<ReplyWindow>(const std::string& channel,
                                                                   const std::string& counterpart, store::Time now)>;

class Run;

class Agent {
 public:
  // REQUIRES: every reference outlives the agent and its runs.
  // `now`: the wall clock, for what the store records (received, leases, postponements) and
  // to time bursts, to the millisecond.
  // `monotonic`: the clock of the pause after lost decisions (Settings::store_pause); empty
  // means std::chrono::steady_clock::now. The agent reads no other clock: its one timer
  // (the wake-up after a pause or a provider wait) waits in real time on the io_context.
  Agent(boost::asio::io_context& io, store::Database& db, llm::Provider& provider, net::Transport& tools,
        Settings settings, std::function<store::Instant()> now,
        std::function<std::chrono::steady_clock::time_point()> monotonic = {});
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  void set_setup(std::shared_ptr<const Setup> setup);
  // The provider answers again (its breaker closed, llm/breaker_provider.h): the messages
  // this agent postponed because it did not answer are taken again now instead of waiting
  // out their pause. Returns how many were still waiting (an error: they wait out their
  // pause). Runs on the loop.
  [[nodiscard]] store::Result<std::int64_t> provider_recovered();
  // A file of message `message_id` is final (stored, or will not be): when its turn waits
  // for its files (Settings::media_wait), the turn is taken again now; it checks its files
  // then and waits again while any is still pending. Returns whether a turn was waiting.
  // Runs on the loop.
  [[nodiscard]] store::Result<bool> media_settled(std::int64_t message_id);
  // Takes ready messages while fewer than max_in_flight are in progress. Call it when
  // messages arrive, and on a timer (postponed messages come back by time).
  void poke();
  // Takes nothing new; runs in progress finish.
  void stop();
  std::size_t in_flight() const;
  void on_decision(std::function<void(const Decision&)> callback);
  // Called once for the decisions written in a round of group commit (store/round.h), inside
  // it right before its COMMIT (store::before_commit), so that the outbox rows they wrote are
  // marked `sending` in that same round, and one COMMIT and one sync carry both the decisions
  // and the marks (the marks cannot be on disk without the decisions; a failed round takes
  // both back). Without a round, posted to the io_context. on_decision still reports a
  // decision once it is durable.
  void on_written(std::function<void()> callback);
  // The MCP servers that catalog actions of kind mcp call (none: such a call is answered
  // "unavailable" to the model). REQUIRES: outlives the agent.
  void set_mcp(mcp::ToolCaller* tools);
  // Called when a run starts on a turn, before its first model call: `answering` is false
  // for a message decided by its type's rule (no reply from the model may follow). Runs on
  // the loop; it must not block (the channel's read mark and typing indicator).
  void on_started(std::function<void(const store::Leased&, bool answering)> callback);
  // Called for each tool call as it is recorded (for metrics).
  void on_tool_call(std::function<void(const store::ToolCallRecord&)> callback);
  // Where the agent learns a counterpart's reply window (common/reply_window.h), read once
  // per turn before the model is asked: the model's context says whether it is open and
  // until when, and while it is closed a free-form reply is refused by the policy (re-asked
  // naming the catalog's template actions). nullopt: the channel has none. Unset: no
  // channel has one. Runs on the loop; it must not block for long (a store read).
  void set_reply_windows(ReplyWindowLookup lookup);

 private:
  friend class Run;
  struct State;
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::agent
