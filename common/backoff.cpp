#include "common/backoff.h"

#include <algorithm>

namespace dispatchd {

std::chrono::milliseconds exponential_backoff(const Backoff& backoff, int failures) {
  if (failures < 1 || backoff.first <= std::chrono::milliseconds(0)) return std::chrono::milliseconds(0);
  std::chrono::milliseconds wait = backoff.first;
  for (int n = 1; n < failures; ++n) {
    // Stops at `max` before doubling past it: at most about 60 rounds, and no overflow.
    if (wait > backoff.max - wait) return backoff.max;
    wait *= 2;
  }
  return std::min(wait, backoff.max);
}

}  // namespace dispatchd
