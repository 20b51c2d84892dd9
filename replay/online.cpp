#include "replay/online.h"

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/json_reader.h"
#include "config/secrets.h"
#include "llm/limiter.h"
#include "llm/retry.h"
#include "net/curl_transport.h"
#include "store/inbox.h"
#include "store/migrations.h"
#include "store/tools/backup.h"
#include "store/tools/sqlite_snapshot.h"
#include "validator/extract.h"

namespace dispatchd::replay {
namespace {

// How long the loop waits for an event before it looks at the interrupt flag again.
constexpr std::chrono::milliseconds k_poll{50};

std::expected<std::string, std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Which parts of two decisions differ, fields compared by name.
std::vector<std::string> differences(const DecisionView& a, const DecisionView& b) {
  std::vector<std::string> out;
  if (a.kind != b.kind) out.emplace_back("kind");
  if (a.action != b.action) out.emplace_back("action");
  if (a.recipient != b.recipient) out.emplace_back("recipient");
  if (a.reason != b.reason) out.emplace_back("reason");
  const auto value = [](const DecisionView& d, const std::string& name) -> std::optional<std::string> {
    for (const auto& [key, v] : d.fields)
      if (key == name) return v;
    return std::nullopt;
  };
  std::vector<std::string> names;
  for (const auto* d : {&a, &b})
    for (const auto& field : d->fields)
      if (std::ranges::find(names, field.first) == names.end()) names.push_back(field.first);
  for (const auto& name : names)
    if (value(a, name) != value(b, name)) out.push_back("field " + name);
  return out;
}

struct Tally {
  std::vector<std::int64_t> latencies;
  bool unpriced = false;

  void add(RunSummary& s, const MessageResult& m) {
    if (m.row.status == store::ProgressStatus::failed) ++s.failed;
    if (m.row.status != store::ProgressStatus::decided) return;
    ++s.decided;
    const auto& attempts = m.attempts;
    if (!attempts.empty() &&
        (attempts.front().verdict == store::Verdict::valid || attempts.front().verdict == store::Verdict::review))
      ++s.valid_first;
    const bool reasked = std::ranges::any_of(attempts, [&](const store::AttemptStat& a) {
      return (a.verdict == store::Verdict::invalid || a.verdict == store::Verdict::error) && &a != &attempts.back();
    });
    if (reasked) ++s.reasked;
    if (m.replayed.kind == store::DecisionKind::escalate) ++s.escalated;
    if (!m.changes.empty()) ++s.changed;
    for (const auto& a : attempts) {
      ++s.attempts;
      s.input_tokens += a.input_tokens.value_or(0);
      s.output_tokens += a.output_tokens.value_or(0);
      if (a.latency_ms) latencies.push_back(*a.latency_ms);
      // One unpriced attempt makes the total unknown: unknown is never free (llm/cost.h).
      const auto cost = attempt_cost(a);
      if (!cost) unpriced = true;
      s.cost = unpriced ? std::nullopt : std::optional<double>(s.cost.value_or(0) + *cost);
    }
  }
};

}  // namespace

std::expected<ModelOptions, std::string> model_options(const config::Config& config, catalog::Catalog catalog,
                                                       const Overrides& overrides) {
  // One provider, never a router: a replay or eval run is pinned to the provider it names.
  struct Pinned {
    std::string key, provider, base_url, model, api_key_env;
    int timeout_ms, max_concurrency;
  };
  Pinned pin{"llm",
             config.llm.provider,
             config.llm.base_url,
             config.llm.model,
             config.llm.api_key_env,
             config.llm.timeout_ms,
             config.llm.max_concurrency};
  if (overrides.fallback) {
    const auto n = *overrides.fallback;
    if (n == 0 || n > config.llm.fallbacks.size())
      return std::unexpected("--llm-fallback " + std::to_string(n) + ": llm.fallbacks has " +
                             std::to_string(config.llm.fallbacks.size()) + " entries");
    const auto& f = config.llm.fallbacks[n - 1];
    pin = {"llm.fallbacks/" + std::to_string(n - 1),
           f.provider,
           f.base_url,
           f.model,
           f.api_key_env,
           f.timeout_ms > 0 ? f.timeout_ms : config.llm.timeout_ms,
           f.max_concurrency > 0 ? f.max_concurrency : config.llm.max_concurrency};
  }
  const auto kind = llm::parse_provider_kind(pin.provider);
  if (!kind) return std::unexpected(pin.key + ".provider: unknown provider " + pin.provider);
  auto key = config::read_secret(pin.api_key_env);
  if (!key) return std::unexpected(pin.key + ".api_key_env: " + key.error());
  ModelOptions options;
  options.provider = {.kind = *kind,
                      .base_url = pin.base_url,
                      .model = overrides.model.value_or(pin.model),
                      .api_key = std::move(*key),
                      .timeout = std::chrono::milliseconds(pin.timeout_ms),
                      .connect_timeout = std::chrono::milliseconds(config.llm.connect_timeout_ms),
                      .max_output_tokens = config.llm.max_output_tokens,
                      // OpenAI's field: another dialect has none (as the daemon's routes).
                      .prompt_cache_key = config.llm.prompt_cache_key && *kind == llm::ProviderKind::openai};
  auto& s = options.settings;
  s.max_retries = config.llm.max_retries;
  s.max_tool_steps = config.llm.max_tool_steps;
  s.history_messages = static_cast<std::size_t>(config.llm.history_messages);
  s.max_in_flight = overrides.concurrency.value_or(static_cast<std::size_t>(pin.max_concurrency));
  s.provider_deadline = std::chrono::seconds(0);  // see the header: escalate at once
  s.worker = "dispatchctl-replay";
  // The agent prices each attempt as it records it (agent/agent.h), in the scratch copy too.
  for (const auto& [model, price] : config.llm.prices)
    s.prices[model] = {price.input, price.output, price.cached_input, price.cache_write};
  std::string prompt;
  if (overrides.system_prompt) {
    prompt = *overrides.system_prompt;
  } else if (config.system_prompt_file) {
    auto text = read_text(*config.system_prompt_file);
    if (!text) return std::unexpected("system_prompt_file: " + text.error());
    prompt = std::move(*text);
  }
  options.setup = agent::make_setup(std::move(catalog), prompt, config.holding_reply);
  return options;
}

namespace {

// The live database, copied into a new SQLite file at place.path: SQLite's online backup of
// a SQLite file, a snapshot of a PostgreSQL store (store/tools/sqlite_snapshot.h).
std::expected<void, std::string> copy_live(store::Database& live, const ScratchPlace& place) {
  if (live.backend() == store::Backend::sqlite) {
    if (auto copied = store::backup(live, place.path); !copied) return std::unexpected(copied.error().message);
    return {};
  }
  auto migrations = store::load_migrations(place.migrations_dir, store::Backend::sqlite);
  if (!migrations) return std::unexpected(migrations.error().message);
  const auto now = store::format_time(std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
  if (auto copied = store::snapshot_to_sqlite(live, place.path, *migrations, now); !copied)
    return std::unexpected(copied.error().message);
  return {};
}

}  // namespace

std::expected<store::Database, std::string> open_scratch(store::Database& live, const Selection& selection,
                                                         const ScratchPlace& place, bool& resumed) {
  const std::string& path = place.path;
  resumed = std::filesystem::exists(path);
  if (resumed) {
    auto scratch = store::Database::open(path, store::Database::Mode::existing);
    if (!scratch) return std::unexpected(scratch.error().message);
    auto ours = store::is_replay_scratch(*scratch);
    if (!ours || !*ours) return std::unexpected(path + " exists and is not a replay's scratch database");
    if (auto left = store::resume_scratch(*scratch); !left)
      return std::unexpected("cannot resume from " + path + ": " + left.error().message);
    return std::move(*scratch);
  }
  std::vector<std::int64_t> ids;
  auto chosen = for_each_selected(live, selection, [&](const store::RecordedMessage& m) { ids.push_back(m.id); });
  if (!chosen) return std::unexpected("cannot read the recorded attempts: " + chosen.error().message);
  if (auto copied = copy_live(live, place); !copied)
    return std::unexpected("cannot copy the database to " + path + ": " + copied.error());
  auto scratch = store::Database::open(path, store::Database::Mode::existing);
  if (!scratch) return std::unexpected(scratch.error().message);
  if (auto prepared = store::prepare_scratch(*scratch, place.migrations_dir, ids); !prepared)
    return std::unexpected("cannot prepare " + path + ": " + prepared.error().message);
  return std::move(*scratch);
}

std::expected<RunEnd, std::string> run_pending(store::Database& scratch, const ModelOptions& options,
                                               const RunHooks& hooks) {
  auto pending = store::pending_count(scratch);
  if (!pending) return std::unexpected("cannot read the progress: " + pending.error().message);
  std::int64_t remaining = *pending;
  boost::asio::io_context io;
  net::CurlTransport transport(io);
  llm::Limiter limiter(io, options.settings.max_in_flight);
  llm::RetryPolicy policy;
  policy.deadline = options.provider.timeout * 4;  // as the daemon (daemon/wiring.cpp)
  llm::RetryingProvider provider(
      std::make_unique<llm::LimitedProvider>(llm::make_provider(options.provider, transport), limiter), policy, io);
  agent::Agent agent(io, scratch, provider, transport, options.settings,
                     [] { return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()); });
  agent.set_setup(options.setup);
  std::optional<std::string> error;
  agent.on_decision([&](const agent::Decision& d) {
    if (d.message_id == 0) return error.emplace("the agent could not take a message: " + d.detail), void();
    std::optional<store::ProgressStatus> status;
    switch (d.outcome) {
      case agent::Outcome::queued:
      case agent::Outcome::escalated:
      case agent::Outcome::ignored: status = store::ProgressStatus::decided; break;
      case agent::Outcome::error: status = store::ProgressStatus::failed; break;
      case agent::Outcome::postponed:
      case agent::Outcome::not_stored:
      case agent::Outcome::handed_over: break;  // taken again (handed_over needs a second agent)
    }
    if (!status) return;
    if (auto marked = store::mark_progress(scratch, d.message_id, *status, d.detail); !marked)
      return error.emplace("cannot record the progress: " + marked.error().message), void();
    --remaining;
    if (hooks.on_message) hooks.on_message(d.message_id);
  });
  agent.poke();
  bool stopping = false;
  while (!error && remaining > 0) {
    if (!stopping && hooks.interrupt && *hooks.interrupt) {
      agent.stop();
      stopping = true;
    }
    if (stopping && agent.in_flight() == 0) break;
    io.run_one_for(k_poll);
    if (io.stopped()) io.restart();
  }
  if (error) return std::unexpected(*error);
  return remaining > 0 ? RunEnd::interrupted : RunEnd::complete;
}

DecisionView view_of(const catalog::Catalog& catalog, const store::StoredDecision& decision) {
  DecisionView view{decision.kind,
                    decision.action,
                    decision.recipient,
                    decision.reason ? std::string(store::to_sql(*decision.reason)) : std::string(),
                    {}};
  if (decision.output.empty()) return view;
  json::Object object;
  const auto found = validator::extract(decision.output, {}, object);
  if (!found.ok()) return view;
  if (!found.object_read &&
      !json::read_object(std::string_view(decision.output).substr(found.offset, found.length), 32, object))
    return view;
  for (const auto& member : object.members()) {
    const std::string value(member.value.is_string() ? member.value.text : member.value.raw);
    if (member.key == catalog.action_field()) view.action = value;
    view.fields.emplace_back(std::string(member.key), value);
  }
  return view;
}

std::optional<double> attempt_cost(const store::AttemptStat& attempt) { return attempt.cost_usd; }

std::optional<std::int64_t> percentile(std::vector<std::int64_t> values, int p) {
  if (values.empty()) return std::nullopt;
  std::ranges::sort(values);
  const auto rank =
      static_cast<std::size_t>(std::ceil(static_cast<double>(p) / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

std::expected<OnlineReport, store::Error> collect(store::Database& scratch, const catalog::Catalog& catalog,
                                                  const std::string& model) {
  auto rows = store::replay_progress(scratch);
  if (!rows) return std::unexpected(std::move(rows.error()));
  OnlineReport report;
  report.model = model;
  Tally tally;
  auto& s = report.summary;
  for (auto& row : *rows) {
    ++s.chosen;
    if (row.status == store::ProgressStatus::pending) {
      ++s.pending;
      continue;
    }
    MessageResult m;
    m.recorded = view_of(catalog, row.recorded);
    auto decided = store::new_decision(scratch, row.message_id);
    if (!decided) return std::unexpected(std::move(decided.error()));
    m.replayed = view_of(catalog, *decided);
    auto attempts = store::attempt_stats(scratch, row.message_id);
    if (!attempts) return std::unexpected(std::move(attempts.error()));
    m.attempts = std::move(*attempts);
    m.row = std::move(row);
    m.changes = differences(m.recorded, m.replayed);
    tally.add(s, m);
    report.messages.push_back(std::move(m));
  }
  report.partial = s.pending > 0;
  s.p50 = percentile(tally.latencies, 50);
  s.p90 = percentile(tally.latencies, 90);
  s.p99 = percentile(tally.latencies, 99);
  return report;
}

}  // namespace dispatchd::replay
