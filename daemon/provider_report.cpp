#include "daemon/provider_report.h"

#include "common/json_out.h"

namespace dispatchd::daemon {
namespace {

bool failing(const std::optional<llm::BreakerStats>& stats) { return stats && stats->state == llm::BreakerState::open; }

std::int64_t open_seconds(const llm::BreakerStats& stats) {
  return std::chrono::duration_cast<std::chrono::seconds>(stats.open_time).count();
}

}  // namespace

std::optional<std::string> provider_note(const std::string& provider, const std::optional<llm::BreakerStats>& stats) {
  if (!failing(stats)) return std::nullopt;
  return "llm " + provider + " failing: breaker open for " + std::to_string(open_seconds(*stats)) + " s, " +
         std::to_string(stats->waiting) + " call(s) waiting";
}

std::string provider_json(const std::string& provider, const std::optional<llm::BreakerStats>& stats) {
  JsonOut out;
  out.begin_object().field("provider", provider);
  out.field("state", std::string_view(failing(stats) ? "failing" : "answering"));
  std::optional<std::int64_t> open_for;
  std::optional<std::string> text;
  if (failing(stats)) {
    open_for = open_seconds(*stats);
    text = "The model provider " + provider + " is failing (for " + std::to_string(*open_for) +
           " s): messages wait and are answered when it is back.";
  }
  out.field("open_for_s", open_for).field("waiting", static_cast<std::int64_t>(stats ? stats->waiting : 0));
  out.field("text", text).end_object();
  return out.str();
}

}  // namespace dispatchd::daemon
