#include "cli/args.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace dispatchd::cli {

std::optional<std::string> Args::get(const std::string& name) const {
  const auto it = options.find(name);
  if (it == options.end()) return std::nullopt;
  return it->second;
}

std::expected<Args, std::string> parse_args(int argc, char** argv, int first, const std::vector<OptionSpec>& specs) {
  Args args;
  for (int i = first; i < argc; ++i) {
    const std::string word = argv[i];
    if (!word.starts_with("--")) {
      args.positional.push_back(word);
      continue;
    }
    const std::string name = word.substr(2);
    const auto spec = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return s.name == name; });
    if (spec == specs.end()) return std::unexpected("unknown option " + word);
    if (args.has(name)) return std::unexpected("option " + word + " given twice");
    if (!spec->takes_value) {
      args.options[name] = "";
      continue;
    }
    if (i + 1 >= argc) return std::unexpected("option " + word + " needs a value");
    args.options[name] = argv[++i];
  }
  return args;
}

std::optional<std::int64_t> positive_id(const std::string& text) {
  std::int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) return std::nullopt;
  return id;
}

std::string operator_actor() {
  const passwd* user = getpwuid(getuid());
  return std::string("dispatchctl:") + (user != nullptr ? user->pw_name : std::to_string(getuid()));
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "dispatchctl: %s\n", message.c_str());
  return k_exit_usage;
}

}  // namespace dispatchd::cli
