#pragma once
// Bounded reads for dispatchctl: nothing it reads can make it allocate without limit.

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

namespace dispatchd::cli {

struct BoundedText {
  std::string text;       // at most `limit` bytes
  std::size_t total = 0;  // bytes seen, even past the limit
};

// Reads all of `in`, keeping the first `limit` bytes and counting the rest.
BoundedText read_bounded(std::FILE* in, std::size_t limit);

// Reads a whole file of at most `limit` bytes; nullopt with `error` set otherwise.
std::optional<std::string> read_file(const std::string& path, std::size_t limit, std::string& error);

}  // namespace dispatchd::cli
