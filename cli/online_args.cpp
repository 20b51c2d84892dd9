#include "cli/online_args.h"

#include <charconv>
#include <cstdio>
#include <filesystem>

#include "cli/io.h"

namespace dispatchd::cli {
namespace {

// The system prompt file is the operator's text; a few hundred KiB is already unusual.
constexpr std::size_t k_max_prompt = 1u << 20;
constexpr std::size_t k_max_concurrency = 256;

volatile std::sig_atomic_t g_interrupted = 0;  // the one thing a signal handler may touch

void on_interrupt(int) {
  if (g_interrupted) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  g_interrupted = 1;
}

}  // namespace

std::vector<OptionSpec> model_option_specs() {
  return {{"system-prompt", true}, {"llm-model", true}, {"llm-fallback", true}, {"concurrency", true}};
}

std::expected<replay::ModelOptions, std::string> model_options_of(const Args& args, const config::Config& config,
                                                                  catalog::Catalog catalog) {
  replay::Overrides overrides;
  overrides.model = args.get("llm-model");
  if (overrides.model && overrides.model->empty()) return std::unexpected("--llm-model takes a model name");
  if (const auto path = args.get("system-prompt")) {
    std::string error;
    auto text = read_file(*path, k_max_prompt, error);
    if (!text) return std::unexpected("--system-prompt: " + error);
    overrides.system_prompt = std::move(*text);
  }
  if (const auto text = args.get("llm-fallback")) {
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (ec != std::errc() || end != text->data() + text->size() || n == 0)
      return std::unexpected("--llm-fallback takes a number: 1 for llm.fallbacks' first entry");
    overrides.fallback = n;
  }
  if (const auto text = args.get("concurrency")) {
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (ec != std::errc() || end != text->data() + text->size() || n == 0 || n > k_max_concurrency)
      return std::unexpected("--concurrency takes a number from 1 to 256");
    overrides.concurrency = n;
  }
  return replay::model_options(config, std::move(catalog), overrides);
}

const volatile std::sig_atomic_t* catch_interrupt() {
  g_interrupted = 0;
  std::signal(SIGINT, on_interrupt);
  return &g_interrupted;
}

bool write_report(const std::string& path, const std::string& text, std::string& error) {
  const std::string partial = path + ".partial";
  std::FILE* out = std::fopen(partial.c_str(), "wb");
  if (!out) return error = "cannot write " + partial, false;
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  if (std::fclose(out) != 0 || !written) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    return error = "cannot write " + partial, false;
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) return error = "cannot write " + path + ": " + ec.message(), false;
  return true;
}

}  // namespace dispatchd::cli
