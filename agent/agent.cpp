#include "agent/agent.h"

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <set>
#include <vector>

#include "agent/context.h"
#include "agent/tools.h"
#include "catalog/render.h"
#include "common/json_out.h"
#include "store/attempts.h"
#include "store/outbox.h"
#include "store/queue.h"
#include "store/round.h"
#include "validator/outbound.h"
#include "validator/validator.h"

namespace dispatchd::agent {
namespace {

using Reason = store::EscalationReason;

std::string errors_json(const std::vector<validator::Finding>& errors) {
  JsonOut out;
  out.begin_array();
  for (const auto& e : errors) {
    out.begin_object().field("path", e.path).field("code", e.code).field("message", e.message).end_object();
  }
  return out.end_array().str();
}

std::string object_json(std::initializer_list<std::pair<const char*, std::string>> fields) {
  JsonOut out;
  out.begin_object();
  for (const auto& [key, value] : fields) out.field(key, value);
  return out.end_object().str();
}

bool has_review_code(const validator::Verdict& verdict, const std::string& code) {
  for (const auto& flag : verdict.review) {
    if (flag.code == code) return true;
  }
  return false;
}

}  // namespace

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::queued: return "queued";
    case Outcome::escalated: return "escalated";
    case Outcome::ignored: return "ignored";
    case Outcome::postponed: return "postponed";
    case Outcome::error: return "error";
    case Outcome::not_stored: return "not_stored";
  }
  return "error";
}

std::shared_ptr<const Setup> make_setup(catalog::Catalog catalog, const std::string& business_prompt,
                                        std::optional<std::string> holding_reply) {
  auto schema = llm::output_schema(catalog);
  // The providers enforce the schema natively; the prompt still lists every enum value.
  std::string system = catalog::render_prompt(catalog, {.schema_enforced = true});
  if (!business_prompt.empty()) system = business_prompt + "\n\n" + system;
  return std::make_shared<const Setup>(
      Setup{std::move(catalog), std::move(system), std::move(schema), std::move(holding_reply)});
}

struct Agent::State : std::enable_shared_from_this<State> {
  boost::asio::io_context& io;
  store::Database& db;
  llm::Provider& provider;
  net::Transport& tools;
  Settings settings;
  std::function<store::Time()> now;
  std::shared_ptr<const Setup> setup;
  std::set<std::int64_t> running;
  // Messages whose decision a failed COMMIT took back; their leases are released when
  // taking resumes. Taking pauses until `paused_until`, for `pause` (doubling while rounds
  // keep failing), so a full disk does not turn into a stream of model calls.
  std::set<std::int64_t> lost;
  std::chrono::milliseconds pause{0};
  std::chrono::steady_clock::time_point paused_until{};
  bool stopping = false;
  bool poke_posted = false;
  std::function<void(const Decision&)> on_decision;
  boost::asio::steady_timer wake;

  State(boost::asio::io_context& io_, store::Database& db_, llm::Provider& provider_, net::Transport& tools_,
        Settings settings_, std::function<store::Time()> now_)
      : io(io_),
        db(db_),
        provider(provider_),
        tools(tools_),
        settings(std::move(settings_)),
        now(std::move(now_)),
        wake(io_) {}

  void poke();
  void take();
  void finished(const Decision& decision);
  void not_stored(std::int64_t id, int attempts, const std::string& why = "the decision was not stored");
  void store_failed();
  void hand_back_lost();
  void wake_after(std::chrono::milliseconds delay);
};

// One message from its lease to its decision. Owned by the callbacks it has pending.
class Run : public std::enable_shared_from_this<Run> {
 public:
  Run(std::shared_ptr<Agent::State> state, store::Leased message)
      : m_state(std::move(state)), m_setup(m_state->setup), m_message(std::move(message)) {}

  void start();

 private:
  using Verdict = validator::Verdict;

  bool apply_type_rule();
  void ask();
  void on_completion(llm::CompletionResult result);
  void on_verdict(const llm::Completion& completion);
  void on_unusable(const llm::ProviderError& error);
  // `policy`: the last reply met the contract but not the policy.
  void after_failure(const std::vector<validator::Finding>& last_errors, bool policy);
  void act(const Verdict& verdict);
  void wait_for_provider(const llm::ProviderError& error);
  void escalate(Reason reason, const std::string& detail, std::optional<store::NewAction> proposal,
                std::optional<std::string> proposed_json = std::nullopt);
  bool record(store::AttemptRecord record);
  void done(Outcome outcome, std::string detail);
  void fail(const std::string& error) { done(Outcome::error, error); }
  // A store call that failed. One that may work later (busy, a full disk) hands the message
  // back after a pause, as a lost decision does; anything else is an error, and the message
  // waits out its lease (a deterministic error would otherwise repeat model calls).
  void fail(const store::Error& error);

  store::Database& db() { return m_state->db; }
  const catalog::Catalog& catalog() const { return m_setup->catalog; }

  std::shared_ptr<Agent::State> m_state;
  std::shared_ptr<const Setup> m_setup;
  store::Leased m_message;
  store::AttemptCounts m_counts;
  std::string m_first_turn;
  std::vector<ToolExchange> m_tools;
  std::optional<FailedPair> m_failed;
};

void Run::start() {
  if (apply_type_rule()) return;
  auto counts = store::count_attempts(db(), m_message.id);
  if (!counts) return fail(counts.error());
  m_counts = *counts;
  const int budget = 1 + m_state->settings.max_retries;
  if (m_counts.failed >= budget) {
    // Every attempt was used before a restart: decide now, as the last run would have.
    return escalate(Reason::contract_failed, object_json({{"why", "the re-ask budget was used before a restart"}}), {});
  }
  if (m_counts.last_raw_output &&
      (m_counts.last_verdict == store::Verdict::invalid || m_counts.last_verdict == store::Verdict::error)) {
    // Resume the re-ask the previous run was about to make.
    const Verdict verdict =
        validator::validate(catalog(), *m_counts.last_raw_output, {m_message.sender, m_message.text});
    if (!verdict.ok) m_failed = FailedPair{*m_counts.last_raw_output, verdict.feedback};
  }
  auto history = store::history(db(), m_message.id, m_state->settings.history_messages);
  if (!history) return fail(history.error());
  m_first_turn = first_turn(*history, {m_message.channel, m_message.sender, m_message.text});
  ask();
}

// A message whose type the configuration decides (not `model`) is decided here, without the
// model: each branch is one store transaction, as the model's decisions are. Returns false
// when the model is to be asked.
bool Run::apply_type_rule() {
  const auto& rules = m_state->settings.type_rules;
  const auto channel = rules.find(m_message.channel);
  if (channel == rules.end()) return false;
  const auto found = channel->second.find(m_message.type);
  if (found == channel->second.end()) return false;
  const TypeRule& rule = found->second;
  const std::string& type = m_message.type;
  switch (rule.action) {
    case TypeAction::model: return false;
    case TypeAction::escalate:
      escalate(Reason::undecodable,
               object_json({{"type", type}, {"why", "the configuration escalates " + type + " messages"}}), {});
      return true;
    case TypeAction::reply: {
      store::NewAction reply{.message_id = m_message.id,
                             .action = "fixed_reply",
                             .arguments = object_json({{"type", type}, {"text", rule.reply_text}}),
                             .recipient = m_message.sender,
                             .body = rule.reply_text};
      auto queued = store::queue_reply(db(), std::move(reply), m_state->now());
      queued ? done(Outcome::queued, "fixed_reply for " + type) : fail(queued.error());
      return true;
    }
    case TypeAction::ignore: {
      auto finished = store::finish(db(), m_message.id, store::Outcome::ignored, m_state->now(),
                                    "the configuration ignores " + type + " messages");
      finished ? done(Outcome::ignored, "type " + type) : fail(finished.error());
      return true;
    }
  }
  return false;
}

void Run::ask() {
  auto request = build_request(m_setup->system, m_first_turn, m_tools, m_failed, m_setup->schema);
  m_state->provider.complete(std::move(request), [self = shared_from_this()](llm::CompletionResult result) {
    self->on_completion(std::move(result));
  });
}

bool Run::record(store::AttemptRecord attempt) {
  attempt.message_id = m_message.id;
  attempt.attempt = m_counts.total + 1;
  if (!store::record_attempt(db(), attempt, m_state->now())) return false;
  ++m_counts.total;
  if (attempt.verdict == store::Verdict::invalid || attempt.verdict == store::Verdict::error) ++m_counts.failed;
  return true;
}

void Run::on_completion(llm::CompletionResult result) {
  if (result) return on_verdict(*result);
  const llm::ProviderError& error = result.error();
  switch (error.error_class) {
    case llm::ErrorClass::truncated:
    case llm::ErrorClass::blocked:
    case llm::ErrorClass::refused:
    case llm::ErrorClass::no_text: return on_unusable(error);
    case llm::ErrorClass::bad_response: {
      const validator::Finding finding{"", "bad_response", error.message};
      if (!record({.provider = error.info.provider,
                   .model = error.info.model,
                   .request_summary = error.info.request_summary,
                   .verdict = store::Verdict::error,
                   .errors = errors_json({finding}),
                   .error_class = "bad_response",
                   .latency_ms = error.info.latency.count()})) {
        return fail("cannot record the attempt");
      }
      m_failed.reset();
      return after_failure({finding}, false);
    }
    case llm::ErrorClass::transport:
    case llm::ErrorClass::rate_limited:
    case llm::ErrorClass::server:
    case llm::ErrorClass::client: return wait_for_provider(error);
  }
}

// A documented answer the validator cannot take: cut off at the output limit (never
// repaired), blocked by a content filter, refused, or without text. Recorded as an invalid
// attempt with what came back, the finish reason and the tokens; the re-ask says why.
void Run::on_unusable(const llm::ProviderError& error) {
  const bool truncated = error.error_class == llm::ErrorClass::truncated;
  const std::string code(llm::to_string(error.error_class));
  const validator::Finding finding{
      "", code,
      truncated ? "the reply was cut off at the model's output limit (finish reason " + error.finish_reason + ")"
                : error.message};
  const auto given = [](const std::string& s) { return s.empty() ? std::nullopt : std::optional<std::string>(s); };
  if (!record({.provider = error.info.provider,
               .model = error.info.model,
               .request_summary = error.info.request_summary,
               .raw_output = given(error.output),
               .verdict = store::Verdict::invalid,
               .errors = errors_json({finding}),
               .error_class = code,
               .latency_ms = error.info.latency.count(),
               .input_tokens = error.usage.input_tokens,
               .output_tokens = error.usage.output_tokens,
               .finish_reason = given(error.finish_reason)})) {
    return fail("cannot record the attempt");
  }
  const std::string feedback =
      truncated ? "Your previous reply was cut off at the output limit before the JSON object ended. Reply with "
                  "exactly ONE complete, shorter JSON object, in this format:\n"
                : "Your previous reply could not be used: " + error.message +
                      ".\nReply with exactly ONE JSON object, in this format:\n";
  m_failed = FailedPair{error.output, feedback + catalog().contract_line()};
  after_failure({finding}, false);
}

void Run::on_verdict(const llm::Completion& completion) {
  const Verdict verdict = validator::validate(catalog(), completion.output, {m_message.sender, m_message.text});
  std::optional<std::string> error_class;
  if (!verdict.errors.empty()) error_class = verdict.errors.front().code;
  const store::Verdict verdict_kind = !verdict.ok              ? store::Verdict::invalid
                                      : verdict.needs_review() ? store::Verdict::review
                                                               : store::Verdict::valid;
  if (!record({.provider = completion.info.provider,
               .model = completion.info.model,
               .request_summary = completion.info.request_summary,
               .raw_output = completion.output,
               .verdict = verdict_kind,
               .errors = errors_json(verdict.errors),
               .error_class = error_class,
               .latency_ms = completion.info.latency.count(),
               .input_tokens = completion.usage.input_tokens,
               .output_tokens = completion.usage.output_tokens,
               .finish_reason = completion.finish_reason})) {
    return fail("cannot record the attempt");
  }
  if (!verdict.ok) {
    m_failed = FailedPair{completion.output, verdict.feedback};
    return after_failure(verdict.errors, verdict.failed_stage == validator::Stage::policy);
  }
  act(verdict);
}

void Run::after_failure(const std::vector<validator::Finding>& last_errors, bool policy) {
  if (m_counts.failed < 1 + m_state->settings.max_retries) return ask();
  // Out of attempts. A reply that met the contract but not the policy (e.g. another
  // recipient, every time) is a policy violation; anything else a contract failure. The
  // last attempt's errors go with it, whatever failed: the validator, a safety block, ...
  JsonOut detail;
  detail.begin_object().field("attempts", m_counts.total).raw("last_errors", errors_json(last_errors)).end_object();
  escalate(policy ? Reason::policy_violation : Reason::contract_failed, detail.str(), {});
}

void Run::act(const Verdict& verdict) {
  const catalog::Action* action = catalog().find_action(verdict.action);
  if (!action) return fail("the verdict names an unknown action " + verdict.action);
  switch (action->kind) {
    case catalog::ActionKind::http: {
      if (static_cast<int>(m_tools.size()) >= m_state->settings.max_tool_steps) {
        return escalate(
            Reason::contract_failed,
            object_json({{"why", "the model kept calling tools past the step limit"}, {"action", action->name}}), {},
            verdict.output);
      }
      auto url = tool_url(*action, verdict.output);
      if (!url) return fail(url.error());
      m_failed.reset();
      run_tool(m_state->tools, *url, {m_state->settings.max_tool_bytes, m_state->settings.tool_timeout},
               [self = shared_from_this(), call = verdict.output](std::string answer) {
                 self->m_tools.push_back({call, std::move(answer)});
                 self->ask();
               });
      return;
    }
    case catalog::ActionKind::reply: {
      const auto outbound = validator::outbound_of(catalog(), verdict, m_message.sender);
      if (!outbound) return fail("the reply action " + action->name + " has no text to send");
      store::NewAction reply{.message_id = m_message.id,
                             .action = verdict.action,
                             .arguments = verdict.output,
                             .recipient = outbound->recipient,
                             .body = outbound->body,
                             .recipient_written = outbound->recipient_written};
      if (verdict.needs_review()) {
        std::string flags;
        for (const auto& flag : verdict.review) flags += (flags.empty() ? "" : ",") + flag.code;
        const bool approval = has_review_code(verdict, "requires_approval");
        return escalate(approval ? Reason::needs_approval : Reason::review_flags, object_json({{"review", flags}}),
                        std::move(reply));
      }
      auto queued = store::queue_reply(db(), std::move(reply), m_state->now());
      if (!queued) return fail(queued.error());
      return done(Outcome::queued, verdict.action);
    }
    case catalog::ActionKind::escalate:
      return escalate(Reason::model_escalated, object_json({{"action", verdict.action}}), {}, verdict.output);
    case catalog::ActionKind::ignore: {
      auto finished = store::finish(db(), m_message.id, store::Outcome::ignored, m_state->now());
      if (!finished) return fail(finished.error());
      return done(Outcome::ignored, verdict.action);
    }
  }
}

void Run::wait_for_provider(const llm::ProviderError& error) {
  const store::Time now = m_state->now();
  if (now - m_message.received_at >= m_state->settings.provider_deadline) {
    return escalate(
        Reason::provider_unavailable,
        object_json({{"error_class", std::string(llm::to_string(error.error_class))}, {"error", error.message}}), {});
  }
  auto wait = m_state->settings.provider_wait;
  if (error.retry_after) wait = std::max(wait, std::chrono::ceil<std::chrono::seconds>(*error.retry_after));
  auto postponed = store::postpone(db(), m_message.id, now + wait);
  if (!postponed) return fail(postponed.error());
  m_state->wake_after(wait);
  done(Outcome::postponed, std::string(llm::to_string(error.error_class)) + ": " + error.message);
}

void Run::escalate(Reason reason, const std::string& detail, std::optional<store::NewAction> proposal,
                   std::optional<std::string> proposed_json) {
  std::optional<store::NewAction> holding;
  if (m_setup->holding_reply) {
    holding = store::NewAction{.message_id = m_message.id,
                               .action = "holding_reply",
                               .arguments = object_json({{"text", *m_setup->holding_reply}}),
                               .recipient = m_message.sender,
                               .body = *m_setup->holding_reply};
  }
  auto id = store::escalate_message(db(), {m_message.id, reason, detail, std::move(proposed_json), std::move(proposal)},
                                    holding, m_state->now());
  if (!id) return fail(id.error());
  done(Outcome::escalated, std::string(store::to_sql(reason)));
}

void Run::fail(const store::Error& error) {
  if (!error.retryable()) return done(Outcome::error, error.message);
  m_state->not_stored(m_message.id, m_counts.total, error.message);
}

void Run::done(Outcome outcome, std::string detail) {
  // Reported once durable: a failed COMMIT takes the decision back with its whole round.
  store::after_commit(db(), [self = shared_from_this(), outcome = std::move(outcome),
                             detail = std::move(detail)](bool durable) mutable {
    if (!durable) return self->m_state->not_stored(self->m_message.id, self->m_counts.total);
    self->m_state->finished({self->m_message.id, std::move(outcome), std::move(detail), self->m_counts.total});
  });
}

void Agent::State::poke() {
  if (poke_posted) return;
  poke_posted = true;
  boost::asio::post(io, [self = shared_from_this()] {
    self->poke_posted = false;
    self->take();
  });
}

void Agent::State::take() {
  if (std::chrono::steady_clock::now() < paused_until) return;  // the wake timer pokes again
  hand_back_lost();
  while (!stopping && setup && running.size() < settings.max_in_flight) {
    auto next = store::take_next(db, settings.worker, now(), settings.lease);
    if (!next) {
      if (next.error().retryable()) store_failed();  // e.g. busy: try again after a pause
      if (on_decision) on_decision({0, Outcome::error, next.error().message, 0});
      return;
    }
    if (!*next) return;
    // A message still running here whose lease ran out is not started twice.
    if (!running.insert((*next)->id).second) continue;
    std::make_shared<Run>(shared_from_this(), std::move(**next))->start();
  }
}

void Agent::State::finished(const Decision& decision) {
  running.erase(decision.message_id);
  pause = std::chrono::milliseconds(0);  // rounds are stored again
  if (on_decision) on_decision(decision);
  poke();
}

void Agent::State::not_stored(std::int64_t id, int attempts, const std::string& why) {
  running.erase(id);
  lost.insert(id);
  store_failed();
  if (on_decision)
    on_decision({id, Outcome::not_stored, why + "; taken again in " + std::to_string(pause.count()) + " ms", attempts});
}

void Agent::State::store_failed() {
  // One pause per failing round, not per decision in it: they all come back at once.
  if (std::chrono::steady_clock::now() < paused_until) return;
  constexpr std::chrono::milliseconds k_max_pause{30'000};
  pause = pause.count() == 0 ? settings.store_pause : std::min(2 * pause, k_max_pause);
  paused_until = std::chrono::steady_clock::now() + pause;
  wake_after(pause);
}

void Agent::State::hand_back_lost() {
  std::vector<std::int64_t> ids;
  for (const auto id : std::exchange(lost, {})) {
    // A lost take leaves the message received, and it may be running again already.
    if (running.contains(id)) continue;
    if (store::release_lease(db, id, settings.worker))
      ids.push_back(id);
    else
      lost.insert(id);
  }
  if (ids.empty()) return;
  store::after_commit(db, [weak = weak_from_this(), ids = std::move(ids)](bool durable) {
    auto self = weak.lock();
    if (!self || durable) return;
    self->lost.insert(ids.begin(), ids.end());
    self->store_failed();
  });
}

void Agent::State::wake_after(std::chrono::milliseconds delay) {
  const auto at = std::chrono::steady_clock::now() + delay;
  if (wake.expiry() > std::chrono::steady_clock::now() && wake.expiry() <= at) return;  // an earlier wake-up is set
  wake.expires_at(at);
  wake.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->poke();
  });
}

Agent::Agent(boost::asio::io_context& io, store::Database& db, llm::Provider& provider, net::Transport& tools,
             Settings settings, std::function<store::Time()> now)
    : m_state(std::make_shared<State>(io, db, provider, tools, std::move(settings), std::move(now))) {}

Agent::~Agent() {
  m_state->stopping = true;
  m_state->wake.cancel();
}

void Agent::set_setup(std::shared_ptr<const Setup> setup) { m_state->setup = std::move(setup); }
void Agent::poke() { m_state->poke(); }
void Agent::stop() {
  m_state->stopping = true;
  m_state->wake.cancel();
}
std::size_t Agent::in_flight() const { return m_state->running.size(); }
void Agent::on_decision(std::function<void(const Decision&)> callback) { m_state->on_decision = std::move(callback); }

}  // namespace dispatchd::agent
