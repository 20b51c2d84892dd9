#include "agent/media_wait.h"

#include <algorithm>

namespace dispatchd::agent {

std::optional<store::Time> media_wait_until(const std::vector<store::MediaRow>& files, store::Time now,
                                            std::chrono::seconds bound) {
  if (bound <= std::chrono::seconds::zero()) return std::nullopt;
  std::optional<store::Time> until;
  for (const auto& file : files) {
    if (file.state != store::MediaState::pending && !store::awaiting_transcript(file)) continue;
    // A row whose time cannot be read waits from now: bounded all the same.
    const store::Time recorded = store::parse_time(file.created_at).value_or(now);
    const store::Time latest = recorded + bound;
    until = until ? std::min(*until, latest) : latest;
  }
  if (!until || *until <= now) return std::nullopt;
  return until;
}

}  // namespace dispatchd::agent
