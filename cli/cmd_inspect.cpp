// dispatchctl inspect email FILE [--gmail-json]: the decoded message as the agent sees it, for
// people debugging a mail (connectors/email/email.h).
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/io.h"
#include "connectors/email/email.h"
#include "connectors/gmail/raw_message.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_inspect_usage = "usage: dispatchctl inspect email FILE|- [--gmail-json]";
// A messages.get response holds the message as base64url (4/3 of it) plus a little JSON.
constexpr std::size_t k_max_input_bytes = 64u << 20;

std::optional<std::string> read_input(const std::string& path, std::string& error) {
  if (path != "-") return read_file(path, k_max_input_bytes, error);
  BoundedText in = read_bounded(stdin, k_max_input_bytes);
  if (in.total > k_max_input_bytes) {
    error = "stdin is larger than " + std::to_string(k_max_input_bytes) + " bytes";
    return std::nullopt;
  }
  return std::move(in.text);
}

int fail(const std::string& message) {
  std::fprintf(stderr, "dispatchctl: inspect email: %s\n", message.c_str());
  return k_exit_rejected;
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  auto args = parse_args(argc, argv, 2, {{"gmail-json", false}});
  if (!args) return usage_error(args.error());
  if (args->positional.size() != 2 || args->positional[0] != "email") return usage_error(k_inspect_usage);
  std::string error;
  auto input = read_input(args->positional[1], error);
  if (!input) return fail(error);
  if (args->has("gmail-json")) {
    auto raw = gmail::parse_raw_response(*input);
    if (!raw) return fail(raw.error());
    *input = std::move(raw->bytes);
  }
  const auto email = email::decode(*input);
  if (!email) return fail(std::string(email::to_string(email.error().kind)) + ": " + email.error().message);
  std::printf("%s\n", email::to_json(*email).c_str());
  return k_exit_ok;
}

}  // namespace dispatchd::cli
