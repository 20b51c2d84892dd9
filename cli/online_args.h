#pragma once
// What `dispatchctl replay --online` and `dispatchctl eval` share: the options that change
// what the model is asked (--catalog, --system-prompt FILE, --llm-model NAME, --concurrency
// N) turned into replay::ModelOptions, Ctrl-C handling, and writing a report whole.

#include <csignal>
#include <expected>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "cli/args.h"
#include "config/config.h"
#include "replay/online.h"

namespace dispatchd::cli {

// --system-prompt, --llm-model and --concurrency (all take a value).
std::vector<OptionSpec> model_option_specs();

// The configuration's provider and agent settings with the options above applied;
// `catalog` is the one to replay against. A one-line error otherwise.
[[nodiscard]] std::expected<replay::ModelOptions, std::string> model_options_of(const Args& args,
                                                                                const config::Config& config,
                                                                                catalog::Catalog catalog);

// Installs a SIGINT handler and returns its flag: the first Ctrl-C sets it (the run takes
// no new message, lets the ones in flight finish and writes a partial report); a second
// one ends the process at once (the scratch database stays consistent: SQLite).
const volatile std::sig_atomic_t* catch_interrupt();

// Exit code of an interrupted run with a partial report (128 + SIGINT, as a shell reports it).
inline constexpr int k_exit_interrupted = 130;

// The whole report or nothing: written next to PATH, then renamed over it.
bool write_report(const std::string& path, const std::string& text, std::string& error);

}  // namespace dispatchd::cli
