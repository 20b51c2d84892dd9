// dispatchctl validate and extract: the validator on a reply read from stdin.
#include <cstdio>
#include <string>

#include "catalog/catalog.h"
#include "cli/args.h"
#include "cli/io.h"
#include "common/json_out.h"
#include "validator/extract.h"
#include "validator/validator.h"

namespace dispatchd::cli {
namespace {

constexpr std::size_t k_max_source_bytes = 1 << 20;

std::optional<validator::Limits> limits_from(const Args& args, std::string& error) {
  validator::Limits limits;
  if (const auto value = args.get("max-bytes")) {
    try {
      std::size_t used = 0;
      limits.max_reply_bytes = std::stoull(*value, &used);
      if (used != value->size() || limits.max_reply_bytes == 0) throw std::invalid_argument("");
    } catch (const std::exception&) {
      error = "--max-bytes takes a positive whole number";
      return std::nullopt;
    }
  }
  return limits;
}

// The reply on stdin. Past the limit only the count is kept: the validator reports
// too_large from the real size without the process holding it.
std::string read_reply(const validator::Limits& limits) {
  BoundedText in = read_bounded(stdin, limits.max_reply_bytes + 1);
  if (in.total > limits.max_reply_bytes) in.text.resize(in.total, ' ');
  return std::move(in.text);
}

}  // namespace

int cmd_validate(int argc, char** argv) {
  auto args = parse_args(argc, argv, 2, {{"catalog", true}, {"source", true}, {"sender", true}, {"max-bytes", true}});
  if (!args) return usage_error(args.error());
  if (!args->positional.empty()) return usage_error("validate takes no positional arguments");
  const auto path = args->get("catalog");
  if (!path) return usage_error("validate needs --catalog FILE");
  std::string error;
  const auto limits = limits_from(*args, error);
  if (!limits) return usage_error(error);

  auto catalog = catalog::Catalog::load_file(*path);
  if (!catalog) {
    const auto& problems = catalog.error();
    return usage_error(
        "bad catalog: " + problems.front().to_string() +
        (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more; see catalog lint)" : ""));
  }
  validator::Context context;
  if (const auto sender = args->get("sender")) context.sender = *sender;
  if (const auto source = args->get("source")) {
    context.source = read_file(*source, k_max_source_bytes, error);
    if (!context.source) return usage_error(error);
  }
  const std::string reply = read_reply(*limits);
  const validator::Verdict verdict = validator::validate(*catalog, reply, context, *limits);
  std::printf("%s\n", validator::to_json(verdict).c_str());
  return verdict.ok ? k_exit_ok : k_exit_rejected;
}

int cmd_extract(int argc, char** argv) {
  auto args = parse_args(argc, argv, 2, {{"max-bytes", true}});
  if (!args) return usage_error(args.error());
  std::string error;
  const auto limits = limits_from(*args, error);
  if (!limits) return usage_error(error);
  const std::string reply = read_reply(*limits);
  const validator::Extraction found = validator::extract(reply, *limits);

  JsonOut out;
  out.begin_object().field("ok", found.ok());
  if (found.ok()) {
    out.field("json", std::string_view(reply).substr(found.offset, found.length)).field("offset", found.offset);
  } else {
    out.begin_object("error").field("code", found.error->code).field("message", found.error->message).end_object();
  }
  out.begin_array("repairs");
  for (const auto& r : found.repairs) out.begin_object().field("code", r.code).field("message", r.message).end_object();
  out.end_array().end_object();
  std::printf("%s\n", out.str().c_str());
  return found.ok() ? k_exit_ok : k_exit_rejected;
}

}  // namespace dispatchd::cli
