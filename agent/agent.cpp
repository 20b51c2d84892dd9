#include "agent/agent.h"

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <iterator>
#include <map>
#include <set>
#include <variant>
#include <vector>

#include "agent/context.h"
#include "agent/decide.h"
#include "agent/media_wait.h"
#include "agent/tools.h"
#include "catalog/render.h"
#include "common/json_out.h"
#include "mcp/fleet.h"
#include "store/attempts.h"
#include "store/conversations.h"
#include "store/media.h"
#include "store/outbox.h"
#include "store/queue.h"
#include "store/round.h"
#include "store/spend.h"
#include "store/transaction.h"
#include "store/turns.h"
#include "store/unit_of_work.h"
#include "validator/validator.h"

namespace dispatchd::agent {
namespace {

using Reason = store::EscalationReason;

// The longest pause after lost decisions (Settings::store_pause is the first).
constexpr std::chrono::milliseconds k_max_store_pause{30'000};
// Postponed messages remembered for Agent::provider_recovered: a backlog's worth.
constexpr std::size_t k_max_provider_waits = 100'000;

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

// An escalation's detail as the JSON of v_escalations.detail.
struct DetailJson {
  std::string operator()(const OutOfAttempts& d) const {
    JsonOut out;
    out.begin_object().field("attempts", d.attempts).raw("last_errors", errors_json(d.last_errors));
    return out.end_object().str();
  }
  std::string operator()(const BudgetUsed&) const {
    return object_json({{"why", "the re-ask budget was used before a restart"}});
  }
  std::string operator()(const PastToolLimit& d) const {
    return object_json({{"why", "the model kept calling tools past the step limit"}, {"action", d.action}});
  }
  std::string operator()(const ModelEscalated& d) const { return object_json({{"action", d.action}}); }
  std::string operator()(const ProviderDown& d) const {
    return object_json({{"error_class", std::string(llm::to_string(d.error_class))}, {"error", d.error}});
  }
  std::string operator()(const TypeEscalated& d) const {
    return object_json(
        {{"type", d.type}, {"why", d.why.empty() ? "the configuration escalates " + d.type + " messages" : d.why}});
  }
};

// The billed tokens, each in its column, and their cost at the prices in force now (none
// when the model or a kind of token it used has no price).
void set_usage(store::AttemptRecord& attempt, const llm::Usage& usage, const llm::PriceTable& prices) {
  attempt.input_tokens = usage.input_tokens;
  attempt.output_tokens = usage.output_tokens;
  attempt.cached_input_tokens = usage.cached_input_tokens;
  attempt.cache_write_tokens = usage.cache_write_tokens;
  attempt.reasoning_tokens = usage.reasoning_tokens;
  const llm::Cost cost = llm::cost_usd(usage, prices, attempt.model);
  attempt.cost_usd = cost ? std::optional<double>(*cost) : std::nullopt;
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
    case Outcome::handed_over: return "handed_over";
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
  std::function<store::Instant()> clock;
  std::shared_ptr<const Setup> setup;
  std::set<std::int64_t> running;
  // Decisions a failed COMMIT took back: their messages are handed back (leases released)
  // when the pause ends, and nothing is taken meanwhile, so a full disk does not turn into
  // a stream of model calls. The pause (on the injected monotonic clock) doubles while
  // decisions keep being lost and starts over once one is stored.
  store::Redo redo;
  bool stopping = false;
  bool poke_posted = false;
  std::function<void(const Decision&)> on_decision;
  std::function<void()> on_written;
  std::function<void(const store::ToolCallRecord&)> on_tool_call;
  std::function<void(const store::Leased&, bool)> on_started;
  ReplyWindowLookup reply_window;
  mcp::ToolCaller* mcp = nullptr;
  bool written_pending = false;    // on_written waits to run once for the decisions written since
  boost::asio::steady_timer wake;  // waits in real time
  // Messages postponed because the provider did not answer, until it answers again
  // (Agent::provider_recovered); at most k_max_provider_waits, the rest wait out their pause.
  std::vector<std::int64_t> provider_waits;
  // Turns postponed for their files (media.wait_s): a message with files -> its turn's lead,
  // for Agent::media_settled; at most k_max_provider_waits, the rest wait out their bound.
  std::map<std::int64_t, std::int64_t> media_waits;
  // Turns whose files became final while the run that postponed them was still being written:
  // released when that run's decision is durable (finished), not before, or the take would
  // find the message still running and pass it by.
  std::set<std::int64_t> settled_while_running;

  State(boost::asio::io_context& io_, store::Database& db_, llm::Provider& provider_, net::Transport& tools_,
        Settings settings_, std::function<store::Instant()> now_,
        std::function<std::chrono::steady_clock::time_point()> monotonic)
      : io(io_),
        db(db_),
        provider(provider_),
        tools(tools_),
        settings(std::move(settings_)),
        clock(std::move(now_)),
        redo(db_, {settings.store_pause, k_max_store_pause},
             {std::move(monotonic), [this](std::chrono::milliseconds pause) { wake_after(pause); }}),
        wake(io_) {}

  store::Time now() const { return store::whole_seconds(clock()); }
  // How messages group into turns: a type the configuration decides by rule is answered on
  // its own, never in a turn of several.
  store::TurnRule turn_rule() const;
  void poke();
  void tell_written();
  void take();
  void finished(const Decision& decision);
  void not_stored(std::int64_t id, int attempts, const std::string& why);
  store::Redo::Write hand_back(std::int64_t id);
  void wake_after(std::chrono::milliseconds delay);
};

// One message from its lease to its decision. Owned by the callbacks it has pending.
// decide() says what to do after each step; the Run records attempts and carries Steps out.
class Run : public std::enable_shared_from_this<Run> {
 public:
  Run(std::shared_ptr<Agent::State> state, store::Leased message)
      : m_state(std::move(state)), m_setup(m_state->setup), m_message(std::move(message)) {}

  void start();
  // Ends the run where it stands, reported once as not stored: its take was in a round whose
  // COMMIT failed (Agent::State::take). Nothing more of it is written or reported.
  void abandon();

 private:
  const TypeRule* type_rule() const;
  // media.wait_s: true when the turn has files still downloading and was postponed until
  // they are final or its bound passes (agent/media_wait.h), or the files could not be read
  // (the run failed).
  bool waits_for_media();
  // The files of the turn's messages (the message's, then each joined one's), in order.
  store::Result<std::vector<store::MediaRow>> turn_media();
  void started(bool answering) const {
    if (m_state->on_started) m_state->on_started(m_message, answering);
  }
  std::optional<FailedPair> resumed_pair() const;
  // Audio messages of the turn read as their transcripts (agent/context.h, spoken_text):
  // false when the run ended instead (a transcript failed: escalated; or a store error).
  bool read_transcripts();
  // The turn's counterpart's reply window, read now (Agent::set_reply_windows).
  void read_window();
  validator::Context validation_context() const { return {m_message.sender, m_turn_text, m_window}; }
  void ask();
  // The first turn: the history, the message and its files (read from the store once per
  // run, kept for its re-asks). False when the run failed.
  bool read_first_turn();
  // llm.budget, before a model call: true when the budget is closed and the turn was made to
  // wait or escalated instead (or the spend could not be read: the run failed).
  bool budget_closed();
  // The budget on the agent's day: the deployment's spend and the turn's conversation's.
  store::Result<BudgetStatus> budget_status();
  void wait_for_budget(const BudgetStatus& status);
  void on_completion(llm::CompletionResult result);
  store::Result<void> record(store::AttemptRecord record);
  store::Result<void> record_answer(const llm::Completion& completion, const validator::Verdict& verdict);
  store::Result<void> record_error(const llm::ProviderError& error);
  void carry_out(const Latest& latest);
  void perform(Ask step);
  void perform(RunTool step);
  void perform(Queue step);
  void perform(QueueFixed step);
  void perform(Propose step);
  void perform(Escalate step);
  void perform(Ignore step);
  void perform(IgnoreType step);
  void perform(Postpone step);
  void perform(Fail step) { fail(step.error); }
  void escalate(Reason reason, const std::string& detail, std::optional<store::NewAction> proposal,
                std::optional<std::string> proposed_json = std::nullopt);
  // Before the model is asked: true when the conversation is held, or is found runaway now
  // (and held by its escalation); the turn is then done without a model call.
  bool stopped_as_runaway();
  // Before a decision is written: true when messages joined the turn since the run began
  // (at most Settings::max_turn_restarts times); the run has started over with all of them.
  bool started_over();
  store::NewAction new_action(Reply reply) const;
  // Runs `write` (store calls about this message) in one transaction, after store::hold_lease:
  // when another take has the message, nothing is written, m_lease_lost is set and the
  // result is an error that fail() turns into handed_over.
  template <typename Write>
  std::invoke_result_t<Write&> held(Write&& write);
  void done(Outcome outcome, std::string detail);
  // The run's one report: finished (its decision is durable, or it was handed over) or not
  // stored. Later calls, and every step after one, do nothing.
  void report_finished(Outcome outcome, const std::string& detail);
  void report_not_stored(const std::string& why);
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
  std::optional<std::string> m_first_turn;  // read with the history at the first ask
  std::vector<llm::Attachment> m_files;     // the turn's files that go to the model, read with it
  std::int64_t m_file_bytes = 0;            // their bytes, for the attempts
  // What the validator grounds replies on: the message, or the turn's messages.
  std::string m_turn_text;
  std::optional<ReplyWindow> m_window;  // read at the run's start and when it starts over
  int m_restarts = 0;                   // times the run started over for messages that joined its turn
  // The attempts recorded before the last restart: the re-ask budget starts over with it.
  store::AttemptCounts m_counts_before;
  std::vector<ToolExchange> m_tools;
  std::optional<FailedPair> m_failed;
  // Who gave the latest answer: a re-ask asks it again (CompletionRequest::prefer).
  std::optional<llm::ProviderModel> m_answered_by;
  bool m_lease_lost = false;
  bool m_reported = false;  // see report_finished
};

template <typename Write>
std::invoke_result_t<Write&> Run::held(Write&& write) {
  using Written = std::invoke_result_t<Write&>;
  return store::transaction<typename Written::value_type>(db(), [&]() -> Written {
    auto holds = store::hold_lease(db(), m_message, m_state->settings.worker);
    if (!holds) return std::unexpected(std::move(holds.error()));
    if (!*holds) {
      m_lease_lost = true;
      return std::unexpected(store::Error::refused("another take has message " + std::to_string(m_message.id)));
    }
    return write();
  });
}

void Run::start() {
  m_turn_text = turn_text(m_message);
  // A message whose type the configuration decides is decided without the model: each
  // branch is one store transaction, as the model's decisions are. Such a message is never
  // in a turn of several (Agent::State::turn_rule).
  if (const TypeRule* rule = type_rule()) {
    started(false);
    return carry_out(Typed{*rule, m_message.type});
  }
  if (waits_for_media()) return;
  if (!read_transcripts()) return;
  if (m_state->settings.runaway && stopped_as_runaway()) return;
  started(true);
  read_window();
  auto counts = store::count_attempts(db(), m_message.id);
  if (!counts) return fail(counts.error());
  m_counts = *counts;
  carry_out(Started{resumed_pair()});
}

bool Run::waits_for_media() {
  const auto bound = m_state->settings.media_wait;
  if (bound <= std::chrono::seconds::zero()) return false;
  auto files = turn_media();
  if (!files) {
    fail(files.error());
    return true;
  }
  const store::Time now = m_state->now();
  const auto until = media_wait_until(*files, now, bound);
  if (!until) return false;
  auto postponed = held([&] { return store::postpone(db(), m_message.id, *until); });
  if (!postponed) {
    fail(postponed.error());
    return true;
  }
  for (const auto& file : *files) {
    if (m_state->media_waits.size() < k_max_provider_waits) m_state->media_waits[file.message_id] = m_message.id;
  }
  m_state->wake_after(*until - now);
  done(Outcome::postponed, "waiting for its files until " + store::format_time(*until));
  return true;
}

store::Result<std::vector<store::MediaRow>> Run::turn_media() {
  std::vector<store::MediaRow> files;
  std::vector<std::int64_t> ids{m_message.id};
  for (const auto& joined : m_message.joined) ids.push_back(joined.id);
  for (const std::int64_t id : ids) {
    auto listed = store::list_media(db(), id);
    if (!listed) return std::unexpected(std::move(listed.error()));
    std::ranges::move(*listed, std::back_inserter(files));
  }
  return files;
}

// The rule for the message's type, unless there is none or it leaves the message to the model.
const TypeRule* Run::type_rule() const {
  const auto& rules = m_state->settings.type_rules;
  const auto channel = rules.find(m_message.channel);
  if (channel == rules.end()) return nullptr;
  const auto found = channel->second.find(m_message.type);
  if (found == channel->second.end() || found->second.action == TypeAction::model) return nullptr;
  return &found->second;
}

bool Run::read_transcripts() {
  // Why the message has no transcript (nullopt: it reads as its transcript, or as written).
  const auto read = [this](std::int64_t id, const std::string& type,
                           std::string& text) -> store::Result<std::optional<std::string>> {
    if (type != "audio") return std::nullopt;
    auto files = store::list_media(db(), id);
    if (!files) return std::unexpected(std::move(files.error()));
    SpokenText spoken = spoken_text(*files);
    if (spoken.kind == SpokenText::Kind::failed) return "the audio could not be transcribed: " + spoken.why;
    if (spoken.kind == SpokenText::Kind::transcribed) text = std::move(spoken.text);
    return std::nullopt;
  };
  auto untranscribed = read(m_message.id, m_message.type, m_message.text);
  for (auto& joined : m_message.joined) {
    if (untranscribed && !*untranscribed) untranscribed = read(joined.id, joined.type, joined.text);
  }
  if (!untranscribed) {
    fail(untranscribed.error());
    return false;
  }
  if (*untranscribed) {
    started(false);
    perform(Escalate{Reason::undecodable, TypeEscalated{m_message.type, **untranscribed}, std::nullopt});
    return false;
  }
  m_turn_text = turn_text(m_message);
  return true;
}

// The failed pair of the last attempt a previous run recorded, to resume its re-ask with.
std::optional<FailedPair> Run::resumed_pair() const {
  const auto& last = m_counts.last_raw_output;
  if (!last || (m_counts.last_verdict != store::Verdict::invalid && m_counts.last_verdict != store::Verdict::error))
    return std::nullopt;
  const auto verdict = validator::validate(catalog(), *last, validation_context());
  if (verdict.ok) return std::nullopt;
  return FailedPair{*last, verdict.feedback};
}

void Run::read_window() {
  m_window.reset();
  if (m_state->reply_window) m_window = m_state->reply_window(m_message.channel, m_message.sender, m_state->now());
}

void Run::carry_out(const Latest& latest) {
  const Limits limits{m_state->settings.max_retries, m_state->settings.max_tool_steps,
                      m_state->settings.provider_deadline, m_state->settings.provider_wait};
  const Progress progress{m_counts.total - m_counts_before.total, m_counts.failed - m_counts_before.failed,
                          static_cast<int>(m_tools.size()), m_message.received_at, m_state->now()};
  std::visit([this](auto step) { perform(std::move(step)); },
             decide(latest, progress, limits, catalog(), m_message.sender));
}

void Run::ask() {
  if (budget_closed()) return;
  if (!m_first_turn && !read_first_turn()) return;
  auto request = build_request(m_setup->system, *m_first_turn, m_tools, m_failed, m_setup->schema, m_files);
  if (m_failed) request.prefer = m_answered_by;
  m_state->provider.complete(std::move(request), [self = shared_from_this()](llm::CompletionResult result) {
    self->on_completion(std::move(result));
  });
}

bool Run::read_first_turn() {
  auto history = store::history(db(), m_message.id, m_state->settings.history_messages);
  if (!history) {
    fail(history.error());
    return false;
  }
  auto listed = turn_media();
  if (!listed) {
    fail(listed.error());
    return false;
  }
  std::vector<store::MediaRow> rows = std::move(*listed);
  // A transcribed audio file is its message's text already (read_transcripts): not sent again.
  std::erase_if(rows, [](const store::MediaRow& row) { return row.transcript_state == store::TranscriptState::done; });
  MediaChoice choice = choose_media(rows, m_state->settings.model_dialects);
  m_files.clear();
  m_file_bytes = 0;
  for (const auto& send : choice.send) {
    std::string bytes;
    bytes.reserve(static_cast<std::size_t>(send.size));
    auto read = store::read_media(db(), send.media_id, [&bytes](std::string_view chunk) {
      bytes.append(chunk);
      return true;
    });
    if (!read && read.error().kind != store::ErrorKind::not_found) {
      fail(read.error());
      return false;
    }
    if (!read) {
      // Purged or erased since it was listed: the model is told it is not there.
      choice.lines.push_back("[A file listed above is not attached after all: it is no longer kept.]");
      continue;
    }
    m_file_bytes += static_cast<std::int64_t>(bytes.size());
    m_files.push_back({send.content_type, send.filename, std::make_shared<const std::string>(std::move(bytes))});
  }
  m_first_turn = first_turn(*history, {m_message.channel, m_message.sender, m_turn_text, 1 + m_message.joined.size(),
                                       m_window, std::move(choice.lines)});
  return true;
}

store::Result<BudgetStatus> Run::budget_status() {
  const Budget& budget = m_state->settings.budget;
  const store::Time now = m_state->now();
  auto day = store::read_day_spend(db(), store::utc_day(now));
  if (!day) return std::unexpected(std::move(day.error()));
  std::optional<store::Spend> conversation;
  if (budget.conversation_daily_usd) {
    auto spent = store::read_conversation_spend(db(), m_message.conversation_id, store::utc_day(now));
    if (!spent) return std::unexpected(std::move(spent.error()));
    conversation = *spent;
  }
  return check_budget(budget, *day, conversation, now);
}

bool Run::budget_closed() {
  const Budget& budget = m_state->settings.budget;
  if (!budget.any()) return false;
  const auto status = budget_status();
  if (!status) {
    fail(status.error());
    return true;
  }
  if (status->open()) return false;
  if (budget.when_spent == WhenSpent::wait) {
    wait_for_budget(*status);
  } else {
    escalate(Reason::budget_exhausted, object_json({{"why", describe(budget, *status)}}), std::nullopt);
  }
  return true;
}

// Like a provider outage's Postpone: the turn is taken again when the day's counters start over.
void Run::wait_for_budget(const BudgetStatus& status) {
  auto postponed = held([&] { return store::postpone(db(), m_message.id, status.until); });
  if (!postponed) return fail(postponed.error());
  m_state->wake_after(std::chrono::duration_cast<std::chrono::milliseconds>(status.until - m_state->now()));
  done(Outcome::postponed, describe(m_state->settings.budget, status));
}

// Every attempt is recorded before the next step: a restart resumes the budget.
void Run::on_completion(llm::CompletionResult result) {
  if (m_reported) return;  // abandoned while the model answered
  const auto& info = result ? result->info : result.error().info;
  if (!info.provider.empty()) m_answered_by = llm::ProviderModel{info.provider, info.model};
  if (result) {
    Answered answered{result->output, validator::validate(catalog(), result->output, validation_context())};
    // A store that refuses for now (busy: another process holds the write lock) hands the
    // message back after a pause; it must not wait out its lease.
    if (auto recorded = record_answer(*result, answered.verdict); !recorded) return fail(recorded.error());
    return carry_out(std::move(answered));
  }
  if (auto recorded = record_error(result.error()); !recorded) return fail(recorded.error());
  carry_out(std::move(result.error()));
}

store::Result<void> Run::record(store::AttemptRecord attempt) {
  attempt.message_id = m_message.id;
  attempt.attempt = m_counts.total + 1;
  // Every request of the run carries the turn's files (build_request).
  attempt.media_count = static_cast<std::int64_t>(m_files.size());
  attempt.media_bytes = m_file_bytes;
  if (auto stored = held([&] { return store::record_attempt(db(), attempt, m_state->now()); }); !stored)
    return std::unexpected(std::move(stored.error()));
  ++m_counts.total;
  if (attempt.verdict == store::Verdict::invalid || attempt.verdict == store::Verdict::error) ++m_counts.failed;
  return {};
}

store::Result<void> Run::record_answer(const llm::Completion& completion, const validator::Verdict& verdict) {
  std::optional<std::string> error_class;
  if (!verdict.errors.empty()) error_class = verdict.errors.front().code;
  const store::Verdict verdict_kind = !verdict.ok              ? store::Verdict::invalid
                                      : verdict.needs_review() ? store::Verdict::review
                                                               : store::Verdict::valid;
  store::AttemptRecord attempt{.provider = completion.info.provider,
                               .model = completion.info.model,
                               .request_summary = completion.info.request_summary,
                               .raw_output = completion.output,
                               .verdict = verdict_kind,
                               .errors = errors_json(verdict.errors),
                               .error_class = error_class,
                               .latency_ms = completion.info.latency.count(),
                               .finish_reason = completion.finish_reason};
  set_usage(attempt, completion.usage, m_state->settings.prices);
  return record(std::move(attempt));
}

// An error that is an attempt: a documented answer the validator cannot take (cut off at the
// output limit, never repaired; blocked by a content filter; refused; without text), with
// what came back, the finish reason and the tokens; or a body that is not the documented
// JSON. No answer at all (the provider is down) records nothing.
store::Result<void> Run::record_error(const llm::ProviderError& error) {
  const auto verdict = attempt_verdict(error.error_class);
  if (!verdict) return {};
  const validator::Finding finding = finding_of(error);
  store::AttemptRecord attempt{.provider = error.info.provider,
                               .model = error.info.model,
                               .request_summary = error.info.request_summary,
                               .verdict = *verdict,
                               .errors = errors_json({finding}),
                               .error_class = finding.code,
                               .latency_ms = error.info.latency.count()};
  if (*verdict == store::Verdict::invalid) {
    const auto given = [](const std::string& s) { return s.empty() ? std::nullopt : std::optional<std::string>(s); };
    attempt.raw_output = given(error.output);
    set_usage(attempt, error.usage, m_state->settings.prices);
    attempt.finish_reason = given(error.finish_reason);
  }
  return record(std::move(attempt));
}

void Run::perform(Ask step) {
  m_failed = std::move(step.failed);
  ask();
}

void Run::perform(RunTool step) {
  m_failed.reset();
  const catalog::Action* action = catalog().find_action(step.action);
  if (!action) return fail("the tool step names an unknown action " + step.action);
  const auto* http = std::get_if<HttpTarget>(&step.target);
  store::ToolCallRecord record{
      .message_id = m_message.id, .attempt = std::max(1, m_counts.total), .action = action->name};
  if (http) {
    record.kind = store::ToolKind::http;
    record.tool = action->http ? action->http->url : "";  // the template: the filled URL holds customer data
  } else {
    record.kind = store::ToolKind::mcp;
    record.server = action->mcp ? std::optional(action->mcp->server) : std::nullopt;
    record.tool = action->mcp ? action->mcp->tool : "";
  }
  auto answered = [self = shared_from_this(), call = std::move(step.call), record = std::move(record),
                   started = std::chrono::steady_clock::now()](ToolAnswer answer) mutable {
    if (self->m_reported) return;  // abandoned while the tool answered
    note_answer(record, answer, started);
    auto stored = self->held([&] { return store::record_tool_call(self->db(), record, self->m_state->now()); });
    if (!stored) return self->fail(stored.error());
    if (self->m_state->on_tool_call) self->m_state->on_tool_call(record);
    self->m_tools.push_back({call, std::move(answer.text)});
    self->ask();
  };
  if (http) {
    return run_tool(m_state->tools, http->url, {m_state->settings.max_tool_bytes, m_state->settings.tool_timeout},
                    std::move(answered));
  }
  if (!m_state->mcp) {
    return boost::asio::post(m_state->io, [answered = std::move(answered)]() mutable {
      answered({"the tool is unavailable: no MCP servers are configured", store::ToolOutcome::disabled, 0});
    });
  }
  m_state->mcp->call(
      action->name, std::move(std::get<McpTarget>(step.target).arguments), "",
      [answered = std::move(answered)](mcp::ServerCore::CallResult result) mutable { answered(mcp_answer(result)); });
}

store::NewAction Run::new_action(Reply reply) const {
  store::NewAction out{.message_id = m_message.id,
                       .action = std::move(reply.action),
                       .arguments = std::move(reply.arguments),
                       .recipient = std::move(reply.outbound.recipient),
                       .body = std::move(reply.outbound.body),
                       .recipient_written = std::move(reply.outbound.recipient_written),
                       .interactive = std::move(reply.outbound.interactive),
                       .template_message = std::move(reply.outbound.template_message)};
  if (!reply.tool) return out;
  auto& call = *reply.tool;
  std::optional<std::string> follow_up;
  if (call.follow_up) follow_up = std::move(call.follow_up->body);
  return store::with_tool(std::move(out), std::move(call.server), std::move(call.tool), std::move(call.arguments),
                          std::move(follow_up));
}

void Run::perform(Queue step) {
  if (started_over()) return;
  const std::string action = step.reply.action;
  auto queued = held([&] { return store::queue_reply(db(), new_action(std::move(step.reply)), m_state->now()); });
  if (!queued) return fail(queued.error());
  done(Outcome::queued, action);
}

void Run::perform(QueueFixed step) {
  store::NewAction reply{.message_id = m_message.id,
                         .action = "fixed_reply",
                         .arguments = object_json({{"type", step.type}, {"text", step.text}}),
                         .recipient = m_message.sender,
                         .body = step.text};
  auto queued = held([&] { return store::queue_reply(db(), std::move(reply), m_state->now()); });
  queued ? done(Outcome::queued, "fixed_reply for " + step.type) : fail(queued.error());
}

void Run::perform(Propose step) {
  if (started_over()) return;
  std::string flags;
  for (const auto& flag : step.flags) flags += (flags.empty() ? "" : ",") + flag;
  escalate(step.reason, object_json({{"review", flags}}), new_action(std::move(step.reply)));
}

void Run::perform(Escalate step) {
  if (started_over()) return;
  escalate(step.reason, std::visit(DetailJson{}, step.detail), std::nullopt, std::move(step.proposed));
}

void Run::perform(Ignore step) {
  if (started_over()) return;
  auto finished = held([&] { return store::finish(db(), m_message.id, store::Outcome::ignored, m_state->now()); });
  if (!finished) return fail(finished.error());
  done(Outcome::ignored, step.action);
}

void Run::perform(IgnoreType step) {
  auto finished = held([&] {
    return store::finish(db(), m_message.id, store::Outcome::ignored, m_state->now(),
                         "the configuration ignores " + step.type + " messages");
  });
  finished ? done(Outcome::ignored, "type " + step.type) : fail(finished.error());
}

void Run::perform(Postpone step) {
  auto postponed = held([&] { return store::postpone(db(), m_message.id, step.until); });
  if (!postponed) return fail(postponed.error());
  if (m_state->provider_waits.size() < k_max_provider_waits) m_state->provider_waits.push_back(m_message.id);
  m_state->wake_after(step.wait);
  done(Outcome::postponed, std::string(llm::to_string(step.error_class)) + ": " + step.error);
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
  auto id = held([&] {
    return store::escalate_message(db(), {m_message.id, reason, detail, std::move(proposed_json), std::move(proposal)},
                                   holding, m_state->now());
  });
  if (!id) return fail(id.error());
  done(Outcome::escalated, std::string(store::to_sql(reason)));
}

bool Run::stopped_as_runaway() {
  auto hold = store::conversation_hold(db(), m_message.conversation_id);
  if (!hold) {
    fail(hold.error());
    return true;
  }
  if (*hold) {
    const std::string why = "the conversation is held by escalation " + std::to_string((*hold)->escalation_id) + " (" +
                            std::string(store::to_sql((*hold)->reason)) + ") until staff close it";
    auto finished =
        held([&] { return store::finish(db(), m_message.id, store::Outcome::ignored, m_state->now(), why); });
    finished ? done(Outcome::ignored, why) : fail(finished.error());
    return true;
  }
  // The checks look back a day at most (agent/runaway.h).
  auto past = store::conversation_activity(db(), m_message.id, m_state->now() - std::chrono::hours(24));
  if (!past) {
    fail(past.error());
    return true;
  }
  const auto verdict = check_runaway(*past, m_turn_text, m_state->clock(), *m_state->settings.runaway);
  if (verdict.verdict == Runaway::answer) return false;
  const Reason reason =
      verdict.verdict == Runaway::suspected_loop ? Reason::suspected_loop : Reason::conversation_limit;
  auto id = held([&]() -> store::Result<std::int64_t> {
    auto escalation = store::escalate_message(
        db(), {m_message.id, reason, object_json({{"why", verdict.why}}), std::nullopt, std::nullopt}, std::nullopt,
        m_state->now());
    if (!escalation) return escalation;
    if (auto holding = store::hold_conversation(db(), m_message.conversation_id, *escalation, reason, m_state->now());
        !holding)
      return std::unexpected(std::move(holding.error()));
    return escalation;
  });
  id ? done(Outcome::escalated, std::string(store::to_sql(reason)) + ": " + verdict.why) : fail(id.error());
  return true;
}

bool Run::started_over() {
  if (m_restarts >= m_state->settings.max_turn_restarts) return false;
  auto joined = held([&] { return store::join_turn(db(), m_message, m_state->settings.worker, m_state->turn_rule()); });
  if (!joined) {
    fail(joined.error());
    return true;
  }
  if (joined->empty()) return false;
  ++m_restarts;
  m_turn_text = turn_text(m_message);
  read_window();
  m_first_turn.reset();
  m_tools.clear();
  m_failed.reset();
  m_counts_before = m_counts;
  carry_out(Started{});
  return true;
}

void Run::fail(const store::Error& error) {
  if (m_lease_lost) {
    // Nothing to wait for: the transaction wrote nothing. The taker decides the message.
    return report_finished(Outcome::handed_over,
                           "the lease ran out and another take has the message; this run stored nothing more");
  }
  if (!error.retryable()) return done(Outcome::error, error.message);
  report_not_stored(error.message);
}

void Run::abandon() { report_not_stored("its take was not stored (the round's COMMIT failed)"); }

void Run::report_finished(Outcome outcome, const std::string& detail) {
  if (std::exchange(m_reported, true)) return;
  m_state->finished({m_message.id, 1 + m_message.joined.size(), outcome, detail, m_counts.total});
}

void Run::report_not_stored(const std::string& why) {
  if (std::exchange(m_reported, true)) return;
  m_state->not_stored(m_message.id, m_counts.total, why);
}

void Run::done(Outcome outcome, std::string detail) {
  m_state->tell_written();
  // Reported once durable: a failed COMMIT takes the decision back with its whole round.
  m_state->redo.commit_then(
      [self = shared_from_this(), outcome, detail = std::move(detail)] { self->report_finished(outcome, detail); },
      [self = shared_from_this()] { self->report_not_stored("the decision was not stored"); });
}

void Agent::State::tell_written() {
  if (!on_written || std::exchange(written_pending, true)) return;
  auto tell = [weak = weak_from_this()] {
    auto self = weak.lock();
    if (!self) return;
    self->written_pending = false;
    self->on_written();
  };
  // Right before the decision's round commits, so that what on_written writes (the outbox's
  // `sending` marks) shares its COMMIT and its sync; without a round, soon.
  if (!store::before_commit(db, tell)) boost::asio::post(io, std::move(tell));
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
  if (redo.paused()) return;  // the wake timer pokes again
  redo.resume();              // hands back what was lost
  while (!stopping && setup && running.size() < settings.max_in_flight) {
    const store::Instant at = clock();
    auto next = store::take_turn(db, settings.worker, at, settings.lease, turn_rule());
    if (!next) {
      if (next.error().retryable()) redo.failed();  // e.g. busy: try again after a pause
      if (on_decision) on_decision({0, 0, Outcome::error, next.error().message, 0});
      return;
    }
    if (!next->taken) {
      // A conversation waits for its quiet time: take again when it may be over.
      if (next->wake_at) wake_after(std::max(std::chrono::milliseconds(1), *next->wake_at - at));
      return;
    }
    // A message still running here whose lease ran out is not started twice.
    if (!running.insert(next->taken->id).second) continue;
    auto run = std::make_shared<Run>(shared_from_this(), std::move(*next->taken));
    // A new message is taken in the round that stores it, before its COMMIT (the model hears
    // of it a commit sooner). Should that COMMIT fail, the message is gone with the take, and
    // its id may be given to the next message stored: the run is abandoned right there (a
    // failed COMMIT answers its waiters before the loop runs anything else), before any step
    // of it could write about the other message. Registered before start(): a decision made
    // at once (a type rule) joins the same round, and its loss is then reported once, here.
    store::after_commit(db, [weak = std::weak_ptr<Run>(run)](bool durable) {
      if (durable) return;
      if (auto lost = weak.lock()) lost->abandon();
    });
    run->start();
  }
}

store::TurnRule Agent::State::turn_rule() const {
  store::TurnRule rule{settings.burst_quiet, settings.burst_max};
  if (settings.type_rules.empty()) return rule;
  rule.joins = [this](std::string_view channel, std::string_view type) {
    const auto rules = settings.type_rules.find(std::string(channel));
    if (rules == settings.type_rules.end()) return true;
    const auto found = rules->second.find(std::string(type));
    return found == rules->second.end() || found->second.action == TypeAction::model;
  };
  return rule;
}

void Agent::State::finished(const Decision& decision) {
  running.erase(decision.message_id);
  if (settled_while_running.erase(decision.message_id) > 0) {
    // Its files became final while its postponement was being written: taken again now (the
    // poke below). Should the store refuse, the turn waits out its media.wait_s instead.
    const auto released = store::release_postponed(db, {decision.message_id});
    if (!released && on_decision) on_decision({decision.message_id, 1, Outcome::error, released.error().message, 0});
  }
  if (on_decision) on_decision(decision);
  poke();
}

void Agent::State::not_stored(std::int64_t id, int attempts, const std::string& why) {
  running.erase(id);
  settled_while_running.erase(id);  // handed back below: taken again anyway
  // One pause per failing round, not per decision in it: they all come back at once.
  redo.later(hand_back(id));
  if (on_decision)
    on_decision({id, 1, Outcome::not_stored, why + "; taken again in " + std::to_string(redo.pause().count()) + " ms",
                 attempts});
}

// Releases the lease of a message whose decision was lost, so that it is taken again at once
// when taking resumes; done again until stored (store::Redo).
store::Redo::Write Agent::State::hand_back(std::int64_t id) {
  return [this, id](store::Database& d) -> store::Result<void> {
    // A lost take leaves the message received, and it may be running again already.
    if (running.contains(id)) return {};
    auto released = store::release_lease(d, id, settings.worker);
    // Never released (e.g. a corrupt database): the message waits out its lease.
    if (!released && !released.error().retryable() && on_decision)
      on_decision({id, 1, Outcome::error, "cannot hand the message back: " + released.error().message, 0});
    return released;
  };
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
             Settings settings, std::function<store::Instant()> now,
             std::function<std::chrono::steady_clock::time_point()> monotonic)
    : m_state(std::make_shared<State>(io, db, provider, tools, std::move(settings), std::move(now),
                                      std::move(monotonic))) {}

Agent::~Agent() {
  m_state->stopping = true;
  m_state->wake.cancel();
}

store::Result<std::int64_t> Agent::provider_recovered() {
  auto& s = *m_state;
  if (s.provider_waits.empty()) return 0;
  auto released = store::release_postponed(s.db, std::exchange(s.provider_waits, {}));
  if (released) s.poke();
  return released;
}

store::Result<bool> Agent::media_settled(std::int64_t message_id) {
  auto& s = *m_state;
  const auto found = s.media_waits.find(message_id);
  if (found == s.media_waits.end()) return false;
  const std::int64_t lead = found->second;
  std::erase_if(s.media_waits, [&](const auto& wait) { return wait.second == lead; });
  if (s.running.contains(lead)) {
    s.settled_while_running.insert(lead);
    return true;
  }
  auto released = store::release_postponed(s.db, {lead});
  if (!released) return std::unexpected(std::move(released.error()));
  if (*released > 0) s.poke();
  return *released > 0;
}

void Agent::set_setup(std::shared_ptr<const Setup> setup) { m_state->setup = std::move(setup); }
void Agent::poke() { m_state->poke(); }
void Agent::stop() {
  m_state->stopping = true;
  m_state->wake.cancel();
}
std::size_t Agent::in_flight() const { return m_state->running.size(); }
void Agent::on_decision(std::function<void(const Decision&)> callback) { m_state->on_decision = std::move(callback); }

void Agent::on_written(std::function<void()> callback) { m_state->on_written = std::move(callback); }
void Agent::set_mcp(mcp::ToolCaller* tools) { m_state->mcp = tools; }
void Agent::on_started(std::function<void(const store::Leased&, bool)> callback) {
  m_state->on_started = std::move(callback);
}

void Agent::on_tool_call(std::function<void(const store::ToolCallRecord&)> callback) {
  m_state->on_tool_call = std::move(callback);
}

void Agent::set_reply_windows(ReplyWindowLookup lookup) { m_state->reply_window = std::move(lookup); }

}  // namespace dispatchd::agent
