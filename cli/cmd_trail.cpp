// dispatchctl trail: one message's story, from its arrival to the audit chain's verdict
// (store/trail.h read, staff/trail_render.h written). Exit 0 printed, 1 no such message,
// 2 usage error.
#include <charconv>
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/target.h"
#include "connectors/registry.h"
#include "staff/trail_render.h"
#include "store/trail.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_trail_usage =
    "usage: dispatchctl [--config FILE | --db FILE] trail MESSAGE_ID [--markdown | --json]\n"
    "       dispatchctl [--config FILE | --db FILE] trail --provider-id ID [--markdown | --json]\n"
    "  MESSAGE_ID is v_messages.message_id; --provider-id finds the message by the channel's id.\n"
    "  Markdown (the default) for people, --json for programs.";

// Without a configuration, the agent's default history length (llm.history_messages).
constexpr std::size_t k_default_history = 10;

std::optional<std::int64_t> parse_message_id(const std::string& text) {
  std::int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) return std::nullopt;
  return id;
}

int no_message(const std::string& what) {
  std::fprintf(stderr, "dispatchctl: no message %s\n", what.c_str());
  return k_exit_rejected;
}

// The message `--provider-id` names: exit code when there is none or more than one.
std::expected<std::int64_t, int> by_provider_id(store::Database& db, const std::string& provider_id) {
  auto ids = store::messages_with_provider_id(db, provider_id, connectors::kind_names());
  if (!ids) return std::unexpected(usage_error(ids.error().message));
  if (ids->empty()) return std::unexpected(no_message("with provider id " + provider_id));
  if (ids->size() > 1) {
    std::string list;
    for (const auto id : *ids) list += (list.empty() ? "" : ", ") + std::to_string(id);
    return std::unexpected(usage_error("provider id " + provider_id + " names messages " + list +
                                       " on different channels: give MESSAGE_ID"));
  }
  return ids->front();
}

}  // namespace

int cmd_trail(int argc, char** argv) {
  auto specs = target_options();
  specs.insert(specs.end(), {{"provider-id", true}, {"markdown", false}, {"json", false}});
  auto args = parse_args(argc, argv, 2, specs);
  if (!args) return usage_error(args.error());
  const auto provider_id = args->get("provider-id");
  if (args->has("markdown") && args->has("json")) return usage_error("give --markdown or --json, not both");
  if (provider_id ? !args->positional.empty() : args->positional.size() != 1) return usage_error(k_trail_usage);
  std::optional<std::int64_t> id;
  if (!provider_id) {
    id = parse_message_id(args->positional[0]);
    if (!id) return usage_error("MESSAGE_ID must be a positive whole number, not " + args->positional[0]);
  }
  auto target = open_target(*args);
  if (!target) return usage_error(target.error());
  if (provider_id) {
    auto found = by_provider_id(target->db, *provider_id);
    if (!found) return found.error();
    id = *found;
  }
  const std::size_t history =
      target->config ? static_cast<std::size_t>(target->config->llm.history_messages) : k_default_history;
  auto trail = store::load_trail(target->db, *id, history);
  if (!trail) {
    if (trail.error().kind == store::ErrorKind::not_found) return no_message(std::to_string(*id));
    return usage_error("cannot read the trail: " + trail.error().message);
  }
  const std::string text = args->has("json") ? staff::trail_json(*trail) + "\n" : staff::trail_markdown(*trail);
  std::fputs(text.c_str(), stdout);
  return k_exit_ok;
}

}  // namespace dispatchd::cli
