#pragma once
// The wall clock, read once per command: the store takes `now` as a value.

#include <chrono>

#include "store/inbox.h"

namespace dispatchd::cli {

inline store::Time now() { return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()); }

}  // namespace dispatchd::cli
