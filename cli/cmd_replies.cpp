// dispatchctl replies: the saved replies staff pick from (staff/saved_replies.h). Whoever
// runs dispatchctl on the server is the operator, with an admin's rights; the audit trail
// names the operating-system account. Exit 0 done, 1 refused, 2 usage.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/clock.h"
#include "cli/target.h"
#include "staff/saved_replies.h"
#include "store/saved_replies.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_replies_usage =
    "usage: dispatchctl [--config FILE | --db FILE] replies list [--json]\n"
    "       dispatchctl ... replies add NAME --text TEXT\n"
    "       dispatchctl ... replies edit ID --text TEXT\n"
    "       dispatchctl ... replies remove ID\n"
    "placeholders: {customer} {escalation} {staff} {channel}; {{ and }} for literal braces";

int reply_refused(const staff::Refusal& refusal) {
  std::fprintf(stderr, "dispatchctl: refused: %s\n", refusal.message.c_str());
  return k_exit_rejected;
}

int list_replies(Target& target, const Args& args) {
  auto replies = store::list_saved_replies(target.db);
  if (!replies) return usage_error(replies.error().message);
  if (args.has("json")) {
    std::printf("%s\n", staff::saved_replies_json(*replies).c_str());
    return k_exit_ok;
  }
  for (const auto& r : *replies)
    std::printf("%lld\t%s\t%s\n", static_cast<long long>(r.id), r.name.c_str(), r.text.c_str());
  if (replies->empty()) std::printf("(no saved replies; add one with: dispatchctl replies add NAME --text TEXT)\n");
  return k_exit_ok;
}

}  // namespace

int cmd_replies(int argc, char** argv) {
  auto specs = target_options();
  specs.push_back({"json", false});
  specs.push_back({"text", true});
  auto args = parse_args(argc, argv, 2, specs);
  if (!args) return usage_error(args.error());
  const auto& words = args->positional;
  if (words.empty()) return usage_error(k_replies_usage);
  const std::string& verb = words[0];
  if (words.size() != (verb == "list" ? 1U : 2U)) return usage_error(k_replies_usage);
  std::optional<std::int64_t> id;
  if (verb == "edit" || verb == "remove") {
    id = positive_id(words[1]);
    if (!id) return usage_error("ID must be a positive whole number, not " + words[1]);
  }
  const auto text = args->get("text");
  if ((verb == "add" || verb == "edit") && !text) return usage_error("replies " + verb + " needs --text TEXT");
  auto target = open_target(*args);
  if (!target) return usage_error(target.error());
  if (verb == "list") return list_replies(*target, *args);
  if (verb == "add") {
    auto added = staff::add_saved_reply(target->db, words[1], *text, operator_actor(), now());
    if (!added) return reply_refused(added.error());
    std::printf("%lld\n", static_cast<long long>(*added));
    std::fprintf(stderr, "saved reply %s added as %lld\n", words[1].c_str(), static_cast<long long>(*added));
    return k_exit_ok;
  }
  if (verb == "edit") {
    auto changed = staff::change_saved_reply(target->db, *id, *text, operator_actor(), now());
    if (!changed) return reply_refused(changed.error());
    std::printf("saved reply %lld changed\n", static_cast<long long>(*id));
    return k_exit_ok;
  }
  if (verb == "remove") {
    auto removed = staff::remove_saved_reply(target->db, *id, operator_actor(), now());
    if (!removed) return reply_refused(removed.error());
    std::printf("saved reply %lld removed\n", static_cast<long long>(*id));
    return k_exit_ok;
  }
  return usage_error("unknown replies command " + verb + "\n" + k_replies_usage);
}

}  // namespace dispatchd::cli
