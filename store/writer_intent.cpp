#include "store/internal/writer_intent.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

namespace dispatchd::store::internal {
namespace {

// Far past SQLite's locks (the pending byte at 1 GiB and the 510 shared bytes after it):
// SQLite never locks or tests it.
constexpr off_t k_intent_byte = off_t{1} << 62;

struct flock one_byte(short type) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = k_intent_byte;
  lock.l_len = 1;
  return lock;  // l_pid 0, as F_OFD_* requires
}

}  // namespace

WriterIntent::WriterIntent(const std::string& path) : m_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}

WriterIntent::~WriterIntent() {
  if (m_fd >= 0) ::close(m_fd);
}

WriterIntent::WriterIntent(WriterIntent&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_announced(std::exchange(other.m_announced, false)) {}

WriterIntent& WriterIntent::operator=(WriterIntent&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = std::exchange(other.m_fd, -1);
    m_announced = std::exchange(other.m_announced, false);
  }
  return *this;
}

// Read locks never conflict with each other, and nobody takes a write lock on the byte (the
// test below only asks), so neither call blocks; a failure (no descriptor) leaves the Round
// pacing, as documented.
void WriterIntent::announce() {
  if (m_fd < 0 || m_announced) return;
  auto lock = one_byte(F_RDLCK);
  m_announced = ::fcntl(m_fd, F_OFD_SETLK, &lock) == 0;
}

void WriterIntent::withdraw() {
  if (!m_announced) return;
  auto lock = one_byte(F_UNLCK);
  m_announced = ::fcntl(m_fd, F_OFD_SETLK, &lock) != 0;
}

bool WriterIntent::others_waiting() const {
  if (m_fd < 0) return false;
  auto lock = one_byte(F_WRLCK);
  return ::fcntl(m_fd, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
}

}  // namespace dispatchd::store::internal
