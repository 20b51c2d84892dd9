#pragma once
// Online replay and eval: recorded (or labelled) inbound messages sent through the agent
// loop itself (agent/agent.h: the same context, validation, re-asks, tools and escalation)
// against a model, in a scratch database prepared by store::prepare_scratch (store/tools/replay.h).
// Nothing reaches a customer: no connector and no outbox pump run here, so a new reply
// stays `approved` in the scratch outbox; the live database is never opened for writing.
//
// Differences from the daemon, on purpose: a provider failure escalates at once
// (provider_unavailable) instead of waiting out llm.provider_deadline_s, since a recorded
// message is past its deadline anyway; message-type rules (connectors.*.message_types)
// are not applied: every message goes to the model; turns are not formed anew
// (agent.burst_quiet_ms is not applied: recorded messages are all "quiet"), and a turn the
// daemon formed (v_messages.turn_id) is answered together again when its first message is
// replayed. Read-only catalog tools (kind `http`) are called as the daemon calls them.

#include <csignal>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/agent.h"
#include "catalog/catalog.h"
#include "config/config.h"
#include "llm/providers.h"
#include "replay/offline.h"
#include "store/database.h"
#include "store/error.h"
#include "store/tools/replay.h"

namespace dispatchd::replay {

// What the model is asked and how: the configuration with the command's overrides.
struct ModelOptions {
  llm::ProviderConfig provider;  // with its key
  agent::Settings settings;
  std::shared_ptr<const agent::Setup> setup;
};

struct Overrides {
  std::optional<std::string> model;          // --llm-model
  std::optional<std::string> system_prompt;  // --system-prompt: the text (read by the caller)
  std::optional<std::size_t> concurrency;    // --concurrency, else llm.max_concurrency
  // --llm-fallback N: ask llm.fallbacks[N - 1] instead of the primary (its dialect, base URL,
  // key, model, timeout and concurrency); --llm-model and --concurrency still override.
  std::optional<std::size_t> fallback;
};

// The provider from llm.* (the key read from llm.api_key_env or its credential), the agent's
// settings and setup from `catalog` and the system prompt (the override, else the
// configuration's system_prompt_file). An error names the problem.
[[nodiscard]] std::expected<ModelOptions, std::string> model_options(const config::Config& config,
                                                                     catalog::Catalog catalog,
                                                                     const Overrides& overrides);

// Where a run's scratch database is, and how to make a SQLite file of a PostgreSQL store.
struct ScratchPlace {
  std::string path;            // a SQLite file, never the live database
  std::string migrations_dir;  // the migrations' root (store::load_migrations): its sqlite/
                               // folder creates the copy of a PostgreSQL store
};

// The scratch database of a run at `place.path`, always a SQLite file. When it exists it
// must hold a run (store::is_replay_scratch), which is resumed: what a stopped run left
// half-way is set back (store::resume_scratch) and `resumed` is set; `selection` is then
// ignored. Otherwise the live database is copied there, safe while the daemon writes (a
// SQLite file by store::backup, a PostgreSQL store by store::snapshot_to_sqlite: one read
// snapshot, nothing written to the server) and prepared with the messages of `selection`
// (offline.h), in the same order.
[[nodiscard]] std::expected<store::Database, std::string> open_scratch(store::Database& live,
                                                                       const Selection& selection,
                                                                       const ScratchPlace& place, bool& resumed);

enum class RunEnd { complete, interrupted };

struct RunHooks {
  // Non-zero (set by a signal handler): take no new message; the ones in flight finish.
  const volatile std::sig_atomic_t* interrupt = nullptr;
  // After each message's decision is stored (or it failed), with its id.
  std::function<void(std::int64_t message_id)> on_message;
};

// Runs the agent over the pending messages of a prepared scratch database (at most
// settings.max_in_flight at once), marking each decided or failed in replay_progress as
// its decision is stored. Returns when none is pending, or after an interrupt once the
// messages in flight are done (RunEnd::interrupted; what is left stays pending for a
// resumed run). An error: the store or the transport failed.
[[nodiscard]] std::expected<RunEnd, std::string> run_pending(store::Database& scratch, const ModelOptions& options,
                                                             const RunHooks& hooks = {});

// A decision for people: what the agent did, with every field of the model's output
// (strings as written, other values as compact JSON), in the output's order.
struct DecisionView {
  store::DecisionKind kind = store::DecisionKind::none;
  std::string action;
  std::string recipient;
  std::string reason;  // the escalation reason's text, "" when none
  std::vector<std::pair<std::string, std::string>> fields;
};
DecisionView view_of(const catalog::Catalog& catalog, const store::StoredDecision& decision);

struct MessageResult {
  store::ProgressRow row;
  DecisionView recorded;
  DecisionView replayed;
  // What differs: "kind", "action", "recipient", "reason", "field NAME"; empty: unchanged.
  std::vector<std::string> changes;
  std::vector<store::AttemptStat> attempts;  // this run's
};

struct RunSummary {
  std::int64_t chosen = 0;   // messages in the run
  std::int64_t decided = 0;  // reported below
  std::int64_t failed = 0;
  std::int64_t pending = 0;      // not run yet (a partial report)
  std::int64_t valid_first = 0;  // decided messages whose first attempt was valid (or review)
  std::int64_t reasked = 0;      // decided messages asked again after a refused answer
  std::int64_t escalated = 0;    // decided messages whose new decision is an escalation
  std::int64_t changed = 0;      // decided messages whose decision changed
  std::int64_t attempts = 0;
  std::int64_t input_tokens = 0;  // as the providers report them
  std::int64_t output_tokens = 0;
  std::optional<double> cost;  // USD, of every attempt; unknown when one is unpriced (attempt_cost)
  // Nearest-rank percentiles of the attempts' latency (ms); none without attempts.
  std::optional<std::int64_t> p50, p90, p99;
};

// An attempt's cost in USD: the agent priced it with llm.prices when it recorded it
// (attempts.cost_usd); nullopt when its model has no price.
std::optional<double> attempt_cost(const store::AttemptStat& attempt);

// Nearest rank: the smallest value with at least p% of `values` at or below it.
std::optional<std::int64_t> percentile(std::vector<std::int64_t> values, int p);

struct OnlineReport {
  std::string catalog;  // a path or name, for the header
  std::string model;
  std::string scratch;  // the scratch database's path
  bool partial = false;
  std::vector<MessageResult> messages;  // decided and failed ones, in replay order
  RunSummary summary;
};

// Reads the run from the scratch database. `catalog` names the action field.
[[nodiscard]] std::expected<OnlineReport, store::Error> collect(store::Database& scratch,
                                                                const catalog::Catalog& catalog,
                                                                const std::string& model);

// The report for people (summary, then every changed message, then every message) and the
// same content for programs. Format contract: docs/cli.md, `dispatchctl replay --online`.
std::string to_markdown(const OnlineReport& report);
std::string to_json(const OnlineReport& report);

}  // namespace dispatchd::replay
