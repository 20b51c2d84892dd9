#include "cli/io.h"

#include <cerrno>
#include <cstring>

namespace dispatchd::cli {

BoundedText read_bounded(std::FILE* in, std::size_t limit) {
  BoundedText result;
  char chunk[1 << 16];
  std::size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, in)) > 0) {
    if (result.text.size() < limit) result.text.append(chunk, std::min(n, limit - result.text.size()));
    result.total += n;
  }
  return result;
}

std::optional<std::string> read_file(const std::string& path, std::size_t limit, std::string& error) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  BoundedText read = read_bounded(file, limit);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) {
    error = "cannot read " + path;
    return std::nullopt;
  }
  if (read.total > limit) {
    error = path + " is larger than " + std::to_string(limit) + " bytes";
    return std::nullopt;
  }
  return std::move(read.text);
}

}  // namespace dispatchd::cli
