// wal_write_probe: what SQLite's way of writing WAL frames costs against one write per commit.
// SQLite writes each frame with two pwrite calls (its 24-byte header, then the page); a VFS
// shim could gather a commit's frames into one. This times both on a file in DIR, the page
// cache only (no sync), so the saving such a shim could bring is known before it is built.
//
//   wal_write_probe [DIR] [FRAMES_PER_COMMIT] [COMMITS]   (defaults: /var/tmp 20 20000)
//
// A benchmark: it prints microseconds per frame and never fails on timing.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr std::size_t k_header = 24;
constexpr std::size_t k_page = 4096;
constexpr off_t k_wrap = off_t{64} << 20;  // the file stays at 64 MiB, as a WAL cut back to it

double micros_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

bool write_all(int fd, const char* data, std::size_t size, off_t at) {
  return ::pwrite(fd, data, size, at) == static_cast<ssize_t>(size);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/var/tmp";
  const int frames = argc > 2 ? std::atoi(argv[2]) : 20;
  const int commits = argc > 3 ? std::atoi(argv[3]) : 20000;
  if (frames < 1 || commits < 1) {
    std::fprintf(stderr, "usage: wal_write_probe [DIR] [FRAMES_PER_COMMIT >= 1] [COMMITS >= 1]\n");
    return 2;
  }
  const std::string path = dir + "/wal_write_probe.tmp";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) {
    std::fprintf(stderr, "wal_write_probe: cannot open %s: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  const std::size_t frame = k_header + k_page;
  std::vector<char> data(frame * static_cast<std::size_t>(frames), 'x');
  const auto run = [&](bool gathered) {
    off_t at = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int c = 0; c < commits; ++c) {
      if (gathered) {
        if (!write_all(fd, data.data(), data.size(), at)) return -1.0;
        at += static_cast<off_t>(data.size());
      } else {
        for (int f = 0; f < frames; ++f) {
          if (!write_all(fd, data.data(), k_header, at) || !write_all(fd, data.data(), k_page, at + k_header))
            return -1.0;
          at += static_cast<off_t>(frame);
        }
      }
      if (at > k_wrap) at = 0;
    }
    return micros_since(start) / commits / frames;
  };
  run(false);  // the file reaches its size and its pages are in the cache for both runs
  const double separate = run(false);
  const double gathered = run(true);
  ::close(fd);
  ::unlink(path.c_str());
  if (separate < 0 || gathered < 0) {
    std::fprintf(stderr, "wal_write_probe: a write failed: %s\n", std::strerror(errno));
    return 1;
  }
  std::printf("%d frames per commit, %d commits: %.2f us per frame as two writes, %.2f us in one write per commit\n",
              frames, commits, separate, gathered);
  return 0;
}
