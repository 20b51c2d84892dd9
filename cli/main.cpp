// dispatchctl: the staff and operator command line. Each subcommand lives in its own file;
// this one only dispatches.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "cli/args.h"

namespace {

constexpr const char* k_usage =
    "usage: dispatchctl COMMAND [OPTIONS]\n"
    "\n"
    "  validate --catalog FILE [--source FILE] [--sender ID] [--max-bytes N]\n"
    "      validate the model reply on stdin; prints the verdict as JSON\n"
    "      exit 0 valid, 1 rejected, 2 usage error\n"
    "  extract [--max-bytes N]\n"
    "      show the JSON the extractor finds in the reply on stdin, and its repairs\n"
    "  catalog lint --catalog FILE\n"
    "      check a catalog file and its examples\n"
    "  catalog schema --catalog FILE [--dialect jsonschema|openai|gemini|prompt]\n"
    "      render the output contract\n"
    "  migrate --db FILE [--migrations DIR]\n"
    "      apply the pending schema migrations (forward-only, checksummed)\n"
    "  audit verify --db FILE\n"
    "      recompute the audit trail's hash chain; names the first broken row\n"
    "  --version, --help\n";

struct Command {
  std::string_view name;
  int (*run)(int, char**);
};

constexpr Command k_commands[] = {
    {"validate", dispatchd::cli::cmd_validate},
    {"extract", dispatchd::cli::cmd_extract},
    {"catalog", dispatchd::cli::cmd_catalog},
    {"migrate", dispatchd::cli::cmd_migrate},
    {"audit", dispatchd::cli::cmd_audit},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(k_usage, stderr);
    return dispatchd::cli::k_exit_usage;
  }
  const std::string_view word = argv[1];
  if (word == "--help" || word == "help") {
    std::fputs(k_usage, stdout);
    return 0;
  }
  if (word == "--version") {
    std::printf("dispatchctl %s\n", DISPATCHD_VERSION);
    return 0;
  }
  for (const auto& command : k_commands) {
    if (command.name == word) return command.run(argc, argv);
  }
  return dispatchd::cli::usage_error("unknown command " + std::string(word) + " (see --help)");
}
