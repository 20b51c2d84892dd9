#pragma once
// What the disk probes (sync_probe, handoff_probe) share: a file preallocated to 64 MiB and
// synced once, as SQLite's WAL is reused, into which each round writes a round's pages at
// the end of the last round's (wrapping around) and then fdatasyncs, as the round's syncer
// does; and the percentiles they print.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <string>
#include <vector>

namespace dispatchd::bench {

inline constexpr std::size_t k_page = 4096;
inline constexpr off_t k_probe_file_size = off_t{64} << 20;

class ProbeFile {
 public:
  // DIR/NAME, removed when the object goes. ok() is false when it could not be prepared,
  // with errno saying why.
  ProbeFile(const std::string& dir, const std::string& name, std::size_t pages_per_write)
      : m_path(dir + "/" + name), m_data(k_page * pages_per_write, 'x') {
    m_fd = ::open(m_path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (m_fd < 0) return;
    // So that no write below changes the file's size.
    if (const int rc = ::posix_fallocate(m_fd, 0, k_probe_file_size); rc != 0) {
      close();
      errno = rc;  // posix_fallocate returns its error instead of setting errno
    } else if (::fsync(m_fd) != 0) {
      close();
    }
  }
  ~ProbeFile() { close(); }
  ProbeFile(const ProbeFile&) = delete;
  ProbeFile& operator=(const ProbeFile&) = delete;

  bool ok() const { return m_fd >= 0; }
  // One round's pages after the last round's; false (errno set) when the write failed.
  bool write() {
    if (m_at + static_cast<off_t>(m_data.size()) > k_probe_file_size) m_at = 0;
    const bool written = ::pwrite(m_fd, m_data.data(), m_data.size(), m_at) == static_cast<ssize_t>(m_data.size());
    m_at += static_cast<off_t>(m_data.size());
    return written;
  }
  bool sync() { return ::fdatasync(m_fd) == 0; }

 private:
  void close() {
    if (m_fd < 0) return;
    ::close(m_fd);
    ::unlink(m_path.c_str());
    m_fd = -1;
  }

  std::string m_path;
  std::vector<char> m_data;
  int m_fd = -1;
  off_t m_at = 0;
};

// The nearest-rank percentile p (0..1) of sorted, non-empty values.
inline double percentile(const std::vector<double>& sorted, double p) {
  const auto at = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(at, sorted.size() - 1)];
}

}  // namespace dispatchd::bench
