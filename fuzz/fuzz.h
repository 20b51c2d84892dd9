#pragma once
// Shared by the fuzz targets: each target file defines LLVMFuzzerTestOneInput and nothing
// else compiler-specific, so that the same file builds into a libFuzzer executable (clang,
// DISPATCHD_FUZZ) and into a replay driver with replay_main.cpp (any compiler, every build).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace dispatchd::fuzz {

// The input as text; the targets take any bytes, NUL and invalid UTF-8 included.
inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A file of the source tree (catalogs the targets load once).
inline std::string source_path(std::string_view relative) {
  return std::string(DISPATCHD_SOURCE_DIR) + "/" + std::string(relative);
}

// An invariant of the code under test broke: a finding as much as a crash. Aborting makes
// libFuzzer keep the input and the replay driver fail.
[[noreturn]] inline void fail(const char* target, const char* what) {
  std::fprintf(stderr, "fuzz %s: invariant broken: %s\n", target, what);
  std::abort();
}

inline void require(bool holds, const char* target, const char* what) {
  if (!holds) fail(target, what);
}

}  // namespace dispatchd::fuzz
