// Replays corpora through a fuzz target without libFuzzer: every regular file under the
// given directories (recursively, in sorted order) is passed once to
// LLVMFuzzerTestOneInput. Built with every compiler; CTest runs it on fuzz/corpus/<target>/,
// under the sanitizers in the sanitizer build. Prints how many inputs it ran.
//   fuzz_replay_<target> DIR|FILE...

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

bool collect(const fs::path& root, std::vector<fs::path>& files) {
  std::error_code ec;
  if (fs::is_regular_file(root, ec)) {
    files.push_back(root);
    return true;
  }
  if (!fs::is_directory(root, ec)) return false;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path());
  }
  return !ec;
}

bool read_file(const fs::path& path, std::string& out) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return false;
  std::ifstream in(path, std::ios::binary);
  out.resize(size);
  in.read(out.data(), static_cast<std::streamsize>(size));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR|FILE...\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    if (!collect(argv[i], files)) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  std::string bytes;
  for (const auto& file : files) {
    if (!read_file(file, bytes)) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], file.c_str());
      return 2;
    }
    // A copy of exactly the input's size, so that AddressSanitizer sees a read past its end.
    const std::vector<std::uint8_t> input(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  std::printf("%s: %zu inputs replayed\n", argv[0], files.size());
  return files.empty() ? 1 : 0;
}
