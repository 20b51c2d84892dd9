// dispatchctl replay: what would a change have done to past traffic? --offline judges every
// recorded model output again with the validator (replay/offline.h); --online sends the
// recorded messages through the agent loop against the model again, in a scratch copy of
// the database next to the report (replay/online.h), resumable and interruptible.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli/args.h"
#include "cli/online_args.h"
#include "cli/target.h"
#include "replay/offline.h"
#include "replay/online.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_replay_usage =
    "usage: dispatchctl replay --config FILE | --db FILE (--offline | --online) [--catalog NEW]\n"
    "         [--system-prompt NEW] [--llm-model NAME] [--llm-fallback N] [--concurrency N] [--since YYYY-MM-DD]\n"
    "         [--limit N] [--sample N [--seed S]] --report OUT.md [--json]";

constexpr int k_exit_failure = 1;

int replay_failure(const std::string& message) {
  std::fprintf(stderr, "dispatchctl: replay: %s\n", message.c_str());
  return k_exit_failure;
}

// A strict YYYY-MM-DD naming a real day.
bool is_day(const std::string& text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return false;
  int y = 0;
  unsigned m = 0, d = 0;
  const char* s = text.data();
  const auto digits = [&](int from, int to, auto& out) {
    const auto [end, ec] = std::from_chars(s + from, s + to, out);
    return ec == std::errc() && end == s + to;
  };
  if (!digits(0, 4, y) || !digits(5, 7, m) || !digits(8, 10, d)) return false;
  return std::chrono::year_month_day{std::chrono::year{y}, std::chrono::month{m}, std::chrono::day{d}}.ok();
}

// A count given as --NAME N: a positive integer (or, with `zero_ok`, 0 as well).
std::expected<std::optional<std::uint64_t>, std::string> count_option(const Args& args, const std::string& name,
                                                                      bool zero_ok = false) {
  const auto text = args.get(name);
  if (!text) return std::nullopt;
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
  if (ec != std::errc() || end != text->data() + text->size() || (n == 0 && !zero_ok) ||
      n > static_cast<std::uint64_t>(INT64_MAX))
    return std::unexpected("--" + name + (zero_ok ? " takes a number" : " takes a positive number"));
  return n;
}

std::expected<replay::Selection, std::string> selection_of(const Args& args) {
  replay::Selection selection;
  selection.since = args.get("since");
  if (selection.since && !is_day(*selection.since))
    return std::unexpected("--since takes a UTC day written YYYY-MM-DD");
  const auto limit = count_option(args, "limit");
  const auto sample = count_option(args, "sample");
  const auto seed = count_option(args, "seed", true);
  for (const auto* n : {&limit, &sample, &seed})
    if (!*n) return std::unexpected(n->error());
  if (*limit) selection.limit = static_cast<std::int64_t>(**limit);
  if (*sample) selection.sample = static_cast<std::int64_t>(**sample);
  if (*seed) {
    if (!selection.sample) return std::unexpected("--seed goes with --sample");
    selection.seed = **seed;
  }
  return selection;
}

// Usage errors that do not need the database; "" when the command line is usable.
std::string check_mode(const Args& args) {
  if (!args.positional.empty()) return k_replay_usage;
  if (args.has("offline") == args.has("online")) return "replay takes --offline or --online (one of them)";
  if (!args.has("online") &&
      (args.has("system-prompt") || args.has("llm-model") || args.has("llm-fallback") || args.has("concurrency")))
    return "--system-prompt, --llm-model, --llm-fallback and --concurrency change what the model is asked: they need "
           "--online";
  if (!args.has("report")) return "replay needs --report OUT.md";
  if (args.has("online") && !args.has("config"))
    return "replay --online needs --config FILE (the provider to ask and the database to copy)";
  if (!args.has("config") && !args.has("db")) return "which database? give --config FILE or --db FILE";
  return "";
}

// The scratch database of a run, next to its report: a second run with the same --report
// finds it and continues.
std::string scratch_path(const std::string& report) { return report + ".scratch.db"; }

int replay_online(const Args& args, const replay::Selection& selection) {
  auto live = open_target(args);
  if (!live) return replay_failure(live.error());
  auto catalog = target_catalog(args, *live);
  if (!catalog) return replay_failure(catalog.error());
  auto options = model_options_of(args, *live->config, *catalog);
  if (!options) return replay_failure(options.error());
  const std::string report_path = *args.get("report");
  const std::string path = scratch_path(report_path);
  bool resumed = false;
  auto scratch = replay::open_scratch(live->db, selection, {path, live->config->migrations_dir}, resumed);
  if (!scratch) return replay_failure(scratch.error());
  if (resumed) std::fprintf(stderr, "dispatchctl: replay: continuing the run in %s\n", path.c_str());
  auto ran = replay::run_pending(*scratch, *options, {catch_interrupt(), {}});
  if (!ran) return replay_failure(ran.error());
  auto report = replay::collect(*scratch, *catalog, options->provider.model);
  if (!report) return replay_failure("cannot read the run: " + report.error().message);
  report->catalog = args.get("catalog").value_or(live->config->catalog);
  report->scratch = path;
  std::string error;
  if (!write_report(report_path, replay::to_markdown(*report), error)) return replay_failure(error);
  const auto& s = report->summary;
  if (args.has("json"))
    std::printf("%s\n", replay::to_json(*report).c_str());
  else
    std::printf("replay: %lld of %lld messages replayed (%lld failed), %lld changed decisions%s; report in %s\n",
                static_cast<long long>(s.decided), static_cast<long long>(s.chosen), static_cast<long long>(s.failed),
                static_cast<long long>(s.changed), report->partial ? " (partial: run again to continue)" : "",
                report_path.c_str());
  return report->partial ? k_exit_interrupted : k_exit_ok;
}

}  // namespace

int cmd_replay(int argc, char** argv) {
  auto specs = target_options();
  const auto model_specs = model_option_specs();
  specs.insert(specs.end(), model_specs.begin(), model_specs.end());
  specs.insert(specs.end(), {{"offline", false},
                             {"online", false},
                             {"since", true},
                             {"limit", true},
                             {"sample", true},
                             {"seed", true},
                             {"report", true},
                             {"json", false}});
  auto args = parse_args(argc, argv, 2, specs);
  if (!args) return usage_error(args.error());
  if (const auto problem = check_mode(*args); !problem.empty()) return usage_error(problem);
  const auto selection = selection_of(*args);
  if (!selection) return usage_error(selection.error());

  if (args->has("online")) return replay_online(*args, *selection);
  auto target = open_target(*args);
  if (!target) return replay_failure(target.error());
  auto catalog = target_catalog(*args, *target);
  if (!catalog) return replay_failure(catalog.error());
  auto report = replay::run_offline(target->db, *catalog, *selection);
  if (!report) return replay_failure("cannot read the recorded attempts: " + report.error().message);
  report->catalog = args->get("catalog").value_or(target->config ? target->config->catalog : "");

  std::string error;
  if (!write_report(*args->get("report"), replay::to_markdown(*report), error)) return replay_failure(error);
  if (args->has("json")) {
    std::printf("%s\n", replay::to_json(*report).c_str());
  } else {
    const auto& total = report->summary.total;
    std::printf(
        "replay: %lld attempts of %lld messages checked: %lld unchanged, %lld valid -> refused, %lld refused -> "
        "valid; report in %s\n",
        static_cast<long long>(total.checked), static_cast<long long>(report->summary.messages),
        static_cast<long long>(total.unchanged), static_cast<long long>(total.valid_to_refused),
        static_cast<long long>(total.refused_to_valid), args->get("report")->c_str());
  }
  return k_exit_ok;
}

}  // namespace dispatchd::cli
