// dispatchctl eval: a labelled set run through the agent loop (replay/eval.h) in a fresh
// scratch database under $TMPDIR (removed afterwards), scored, and gated on --min-accuracy
// so that a prompt, catalog or model change can fail a CI job.
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli/io.h"
#include "cli/online_args.h"
#include "cli/target.h"
#include "connectors/registry.h"
#include "replay/eval.h"

namespace dispatchd::cli {
namespace {

constexpr std::size_t k_max_set_bytes = 4u << 20;

int eval_failure(const std::string& message) {
  std::fprintf(stderr, "dispatchctl: eval: %s\n", message.c_str());
  return k_exit_rejected;
}

std::expected<std::optional<double>, std::string> min_accuracy(const Args& args) {
  const auto text = args.get("min-accuracy");
  if (!text) return std::nullopt;
  double x = -1;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), x);
  if (ec != std::errc() || end != text->data() + text->size() || !(x >= 0 && x <= 1))
    return std::unexpected("--min-accuracy takes a number from 0 to 1 (a share of the cases, e.g. 0.9)");
  return x;
}

// A fresh folder for the scratch database, removed with everything in it when done.
struct TempFolder {
  std::string path;
  TempFolder() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/dispatchctl-eval-XXXXXX";
    if (mkdtemp(pattern.data())) path = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
};

}  // namespace

int cmd_eval(int argc, char** argv) {
  auto specs = target_options();
  const auto model_specs = model_option_specs();
  specs.insert(specs.end(), model_specs.begin(), model_specs.end());
  specs.insert(specs.end(), {{"min-accuracy", true}, {"report", true}, {"json", false}});
  auto args = parse_args(argc, argv, 2, specs);
  if (!args) return usage_error(args.error());
  if (args->positional.size() != 1)
    return usage_error(
        "usage: dispatchctl eval SET.jsonl --config FILE [--catalog NEW] [--system-prompt NEW]\n"
        "         [--llm-model NAME] [--llm-fallback N] [--concurrency N] [--min-accuracy X] [--report OUT.md]\n"
        "         [--json]");
  if (!args->has("config")) return usage_error("eval needs --config FILE (the provider to ask)");
  if (args->has("db")) return usage_error("eval runs in a scratch database of its own: give --config, not --db");
  const auto gate = min_accuracy(*args);
  if (!gate) return usage_error(gate.error());
  const std::string set_path = args->positional.front();
  std::string error;
  const auto text = read_file(set_path, k_max_set_bytes, error);
  if (!text) return usage_error("eval: " + error);
  std::vector<std::string_view> channels;
  for (const auto* kind : connectors::kinds()) channels.push_back(kind->name);
  const auto cases = replay::parse_set(*text, channels);
  if (!cases) {
    const auto& e = cases.error();
    return usage_error("eval: " + set_path + (e.line ? ":" + std::to_string(e.line) : "") + ": " + e.message);
  }
  auto config = config::load(*args->get("config"));
  if (!config) return eval_failure("bad configuration: " + config.error().front());
  auto catalog = catalog::Catalog::load_file(args->get("catalog").value_or(config->catalog));
  if (!catalog) return eval_failure("bad catalog: " + catalog.error().front().to_string());
  auto options = model_options_of(*args, *config, std::move(*catalog));
  if (!options) return eval_failure(options.error());

  TempFolder scratch;
  if (scratch.path.empty()) return eval_failure("cannot create a scratch folder under $TMPDIR");
  auto report =
      replay::run_eval(*cases, *options, scratch.path + "/eval.db", config->migrations_dir, {catch_interrupt(), {}});
  if (!report) return eval_failure(report.error());
  report->set = set_path;
  report->catalog = args->get("catalog").value_or(config->catalog);
  if (const auto out = args->get("report"); out && !write_report(*out, replay::eval_markdown(*report), error))
    return eval_failure(error);
  if (args->has("json"))
    std::printf("%s\n", replay::eval_json(*report).c_str());
  else
    std::printf("eval: %lld of %zu cases correct (accuracy %.3f)%s\n", static_cast<long long>(report->correct),
                report->cases.size(), report->accuracy, report->partial ? " (partial: interrupted)" : "");
  if (report->partial) return k_exit_interrupted;
  if (*gate && report->accuracy < **gate) {
    std::fprintf(stderr, "dispatchctl: eval: accuracy %.3f is below --min-accuracy %s\n", report->accuracy,
                 args->get("min-accuracy")->c_str());
    return k_exit_rejected;
  }
  return k_exit_ok;
}

}  // namespace dispatchd::cli
