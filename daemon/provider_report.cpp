#include "daemon/provider_report.h"

#include "common/json_out.h"

namespace dispatchd::daemon {
namespace {

bool failing(const llm::BreakerStats& stats) { return stats.state == llm::BreakerState::open; }

std::int64_t open_seconds(const llm::BreakerStats& stats) {
  return std::chrono::duration_cast<std::chrono::seconds>(stats.open_time).count();
}

std::string named(const llm::ProviderModel& p) { return p.provider + "/" + p.model; }

}  // namespace

std::optional<std::string> provider_note(const ProviderStates& states) {
  std::string note;
  for (const auto& [who, stats] : states) {
    if (!failing(stats)) continue;
    if (!note.empty()) note += "; ";
    note += "llm " + named(who) + " failing: breaker open for " + std::to_string(open_seconds(stats)) + " s, " +
            std::to_string(stats.waiting) + " call(s) waiting";
  }
  if (note.empty()) return std::nullopt;
  return note;
}

std::string provider_json(const ProviderStates& states) {
  const bool primary_fails = !states.empty() && failing(states.front().second);
  const llm::ProviderModel* answering = nullptr;
  for (const auto& [who, stats] : states) {
    if (!failing(stats)) {
      answering = &who;
      break;
    }
  }
  const char* state = !primary_fails ? "answering" : answering ? "fallback" : "failing";
  std::optional<std::string> text;
  if (primary_fails) {
    const auto& [primary, stats] = states.front();
    text = "The model provider " + named(primary) + " is failing (for " + std::to_string(open_seconds(stats)) +
           " s): " +
           (answering ? named(*answering) + " answers meanwhile." : "messages wait and are answered when it is back.");
  }
  JsonOut out;
  out.begin_object().field("state", std::string_view(state)).begin_array("providers");
  for (const auto& [who, stats] : states) {
    std::optional<std::int64_t> open_for;
    if (failing(stats)) open_for = open_seconds(stats);
    out.begin_object().field("provider", who.provider).field("model", who.model);
    out.field("state", std::string_view(failing(stats) ? "failing" : "answering")).field("open_for_s", open_for);
    out.field("waiting", static_cast<std::int64_t>(stats.waiting)).end_object();
  }
  out.end_array().field("text", text).end_object();
  return out.str();
}

}  // namespace dispatchd::daemon
