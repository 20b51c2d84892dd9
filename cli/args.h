#pragma once
// A small option parser for dispatchctl subcommands: "--name value" and "--flag", each
// declared up front, so that an unknown or repeated option is a usage error (exit 2).

#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dispatchd::cli {

struct OptionSpec {
  std::string name;  // without the leading "--"
  bool takes_value;
};

struct Args {
  std::map<std::string, std::string> options;  // flags map to ""
  std::vector<std::string> positional;

  bool has(const std::string& name) const { return options.contains(name); }
  std::optional<std::string> get(const std::string& name) const;
};

// Parses argv[first..argc). Returns a one-line error on an unknown, repeated or
// value-less option.
[[nodiscard]] std::expected<Args, std::string> parse_args(int argc, char** argv, int first,
                                                          const std::vector<OptionSpec>& specs);

// Exit codes shared by every subcommand.
inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_rejected = 1;
inline constexpr int k_exit_usage = 2;

// Prints "dispatchctl: <message>" on stderr and returns k_exit_usage.
int usage_error(const std::string& message);

// A whole number above 0 written as such ("12", not "+12" or "12x"); nullopt otherwise.
std::optional<std::int64_t> positive_id(const std::string& text);

// Who ran dispatchctl, for the audit trail of what the operator manages (staff accounts,
// saved replies): "dispatchctl:" + the operating-system account.
std::string operator_actor();

int cmd_validate(int argc, char** argv);
int cmd_extract(int argc, char** argv);
int cmd_catalog(int argc, char** argv);
int cmd_migrate(int argc, char** argv);
int cmd_audit(int argc, char** argv);
int cmd_queue(int argc, char** argv);
int cmd_backup(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_staff(int argc, char** argv);
int cmd_replies(int argc, char** argv);
int cmd_templates(int argc, char** argv);
int cmd_media(int argc, char** argv);
int cmd_replay(int argc, char** argv);
int cmd_trail(int argc, char** argv);
int cmd_eval(int argc, char** argv);
int cmd_erase(int argc, char** argv);
int cmd_archive(int argc, char** argv);
int cmd_migrate_store(int argc, char** argv);
int cmd_mcp(int argc, char** argv);
int cmd_cost(int argc, char** argv);

}  // namespace dispatchd::cli
