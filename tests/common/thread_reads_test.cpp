#include "common/thread_reads.h"

#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include <linux/magic.h>

using dispatchd::common::blocks_read_by_this_thread;

TEST_CASE("thread reads: a read the page cache misses is counted, one it serves is not", "[thread_reads]") {
  char path[] = "/var/tmp/dispatchd-thread-reads-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  struct statfs fs {};
  REQUIRE(fstatfs(fd, &fs) == 0);
  if (fs.f_type == TMPFS_MAGIC) {
    close(fd);
    unlink(path);
    SUCCEED("/var/tmp is tmpfs: nothing is read from a disk there");
    return;
  }
  const std::vector<char> block(1 << 20, 'x');
  REQUIRE(write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size()));
  REQUIRE(fsync(fd) == 0);
  std::vector<char> back(block.size());

  // Written and still cached: reading it back touches no disk.
  const std::int64_t before_cached = blocks_read_by_this_thread();
  REQUIRE(pread(fd, back.data(), back.size(), 0) == static_cast<ssize_t>(back.size()));
  CHECK(blocks_read_by_this_thread() == before_cached);

  // Dropped from the cache (clean after the fsync, so the kernel lets it go): read from disk.
  REQUIRE(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
  const std::int64_t before = blocks_read_by_this_thread();
  REQUIRE(pread(fd, back.data(), back.size(), 0) == static_cast<ssize_t>(back.size()));
  const std::int64_t read = blocks_read_by_this_thread() - before;
  close(fd);
  unlink(path);
  CHECK(read >= 8);  // at least one 4 KiB page, in 512-byte blocks
}
