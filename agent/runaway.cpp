#include "agent/runaway.h"

#include <algorithm>

namespace dispatchd::agent {

std::string normalised(std::string_view text) {
  std::string out;
  bool gap = false;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    // Bytes of multi-byte UTF-8 characters are kept as they are: letters of other scripts.
    const bool word = u >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!word) {
      gap = !out.empty();
      continue;
    }
    if (gap) out += ' ';
    gap = false;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

namespace {

constexpr std::size_t k_min_echo = 20;  // characters of normalised text

// Our replies sent at or after `since`.
int replies_since(const Activity& past, store::Instant since) {
  return static_cast<int>(std::count_if(past.replies.begin(), past.replies.end(),
                                        [&](const Activity::Reply& r) { return r.sent >= since; }));
}

// When the counterpart wrote next after `reply`: the turn after the one it answered, else the
// turn being decided.
store::Instant next_arrival(const Activity& past, const Activity::Reply& reply) {
  return reply.turn + 1 < past.turns.size() ? past.turns[reply.turn + 1].arrived : past.arrived;
}

}  // namespace

RunawayVerdict check_runaway(const Activity& past, std::string_view turn, store::Instant now,
                             const RunawayLimits& limits) {
  const std::string text = normalised(turn);
  // Our own reply echoed back: an auto-responder that quotes what it got. Short texts
  // ("ok", "gracias") are left out: a person may write what we wrote.
  if (text.size() >= k_min_echo) {
    for (const auto& reply : past.replies)
      if (normalised(reply.text) == text) return {Runaway::suspected_loop, "the message repeats our reply back"};
  }
  // The same text, turn after turn.
  if (limits.repeats > 1 && static_cast<int>(past.turns.size()) >= limits.repeats - 1 && !text.empty()) {
    const auto first = past.turns.end() - (limits.repeats - 1);
    if (std::all_of(first, past.turns.end(), [&](const Activity::Turn& t) { return normalised(t.text) == text; }))
      return {Runaway::suspected_loop, "the same text " + std::to_string(limits.repeats) + " times in a row"};
  }
  // A bot's cadence: an answer within seconds of each of our last replies.
  if (limits.cadence_turns > 0 && static_cast<int>(past.replies.size()) >= limits.cadence_turns) {
    const auto first = past.replies.end() - limits.cadence_turns;
    const bool quick = std::all_of(first, past.replies.end(), [&](const Activity::Reply& r) {
      const auto gap = next_arrival(past, r) - r.sent;
      return gap >= std::chrono::milliseconds(0) && gap <= limits.cadence;
    });
    if (quick)
      return {Runaway::suspected_loop, "answered within " + std::to_string(limits.cadence.count()) +
                                           " ms of each of our last " + std::to_string(limits.cadence_turns) +
                                           " replies"};
  }
  using std::chrono::minutes;
  if (limits.replies_per_10_minutes > 0 && replies_since(past, now - minutes(10)) >= limits.replies_per_10_minutes)
    return {Runaway::conversation_limit, std::to_string(limits.replies_per_10_minutes) +
                                             " replies in 10 minutes (agent.limits.replies_per_10_minutes)"};
  if (limits.replies_per_day > 0 && replies_since(past, now - std::chrono::hours(24)) >= limits.replies_per_day)
    return {Runaway::conversation_limit,
            std::to_string(limits.replies_per_day) + " replies in 24 hours (agent.limits.replies_per_day)"};
  return {};
}

}  // namespace dispatchd::agent
