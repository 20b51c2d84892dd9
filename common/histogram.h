#pragma once
// A histogram of durations in microseconds over fixed upper bounds, kept cumulative as
// Prometheus's buckets are: at_most[i] counts the values up to Bounds[i]; `count` is the
// +Inf bucket. Plain data, added to on one thread and copied out to be rendered
// (daemon/metrics.cpp). `Bounds` is a constexpr std::array of ascending bounds.

#include <array>
#include <cstddef>
#include <cstdint>

namespace dispatchd::common {

template <const auto& Bounds>
struct Histogram {
  std::array<std::int64_t, Bounds.size()> at_most{};
  std::int64_t count = 0;
  std::int64_t sum_us = 0;
  std::int64_t max_us = 0;

  void add(std::int64_t us) {
    for (std::size_t i = 0; i < Bounds.size(); ++i)
      if (us <= Bounds[i]) ++at_most[i];
    ++count;
    sum_us += us;
    if (us > max_us) max_us = us;
  }
};

}  // namespace dispatchd::common
