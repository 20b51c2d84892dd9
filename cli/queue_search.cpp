#include "cli/queue_search.h"

#include <cstdio>

#include "cli/queue_table.h"
#include "staff/search.h"
#include "store/history.h"

namespace dispatchd::cli {
namespace {

constexpr std::int64_t k_history_default = 30;

}  // namespace

int search_queue(Target& target, const Args& args, store::Time at) {
  auto search = staff::read_search({.customer = args.get("customer"),
                                    .text = args.get("text"),
                                    .reason = args.get("reason"),
                                    .status = args.get("status"),
                                    .from = args.get("from"),
                                    .to = args.get("to"),
                                    .before = args.get("before"),
                                    .limit = args.get("limit")});
  if (!search) return usage_error("queue search: " + search.error());
  auto rows = store::search_escalations(target.db, *search);
  if (!rows) return usage_error(rows.error().message);
  print_escalations(*rows, target_clock(target, at), args.has("json"));
  if (!args.has("json") && rows->empty()) std::printf("(no escalations found)\n");
  return k_exit_ok;
}

int show_history(Target& target, const Args& args, std::int64_t id) {
  std::optional<std::int64_t> before;
  if (const auto text = args.get("before")) {
    before = positive_id(*text);
    if (!before) return usage_error("--before takes a message id, not " + *text);
  }
  std::int64_t limit = k_history_default;
  if (const auto text = args.get("limit")) {
    const auto n = positive_id(*text);
    if (!n || *n > staff::k_search_page_max)
      return usage_error("--limit is 1 to " + std::to_string(staff::k_search_page_max));
    limit = *n;
  }
  auto cases = store::customer_escalations(target.db, id, staff::k_history_cases);
  if (!cases) {
    std::fprintf(stderr, "dispatchctl: %s\n", cases.error().message.c_str());
    return cases.error().kind == store::ErrorKind::not_found ? k_exit_rejected : k_exit_usage;
  }
  auto messages = store::customer_messages(target.db, id, before, limit + 1);
  if (!messages) return usage_error(messages.error().message);
  const bool more = static_cast<std::int64_t>(messages->size()) > limit;
  if (more) messages->pop_back();
  if (args.has("json")) {
    std::printf("%s\n", staff::history_json(*cases, *messages, more).c_str());
    return k_exit_ok;
  }
  std::printf("other cases of this customer (%zu, newest first):\n", cases->size());
  for (const auto& c : *cases) {
    std::printf("  escalation %lld %s %s, %s%s%s\n", static_cast<long long>(c.id), c.created_at.c_str(),
                std::string(store::to_sql(c.reason)).c_str(), std::string(store::to_sql(c.status)).c_str(),
                c.assignee ? (" by " + *c.assignee).c_str() : "",
                c.resolution ? (": " + preview(*c.resolution, 60)).c_str() : "");
  }
  std::printf("\nmessages (newest first):\n");
  for (const auto& entry : *messages) {
    const auto& m = entry.message;
    std::printf(
        "  #%lld %s [%s]%s: %s\n", static_cast<long long>(m.id), m.received_at.c_str(), m.conversation_id.c_str(),
        entry.escalation_id ? (" escalation " + std::to_string(*entry.escalation_id)).c_str() : "", m.text.c_str());
    for (const auto& r : entry.replies) {
      std::printf("     -> %s by %s (%s): %s\n", r.action.c_str(), r.created_by.c_str(),
                  std::string(store::to_sql(r.status)).c_str(), preview(r.body.value_or(""), 80).c_str());
    }
  }
  if (more) {
    std::printf("(older: queue history %lld --before %lld)\n", static_cast<long long>(id),
                static_cast<long long>(messages->back().message.id));
  }
  return k_exit_ok;
}

}  // namespace dispatchd::cli
