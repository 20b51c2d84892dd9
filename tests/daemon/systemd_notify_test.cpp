#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "daemon/systemd_notify.h"
#include "tests/store/temp_dir.h"

using namespace dispatchd;

TEST_CASE("notify: READY, STATUS, WATCHDOG and STOPPING reach NOTIFY_SOCKET", "[notify]") {
  test::TempDir dir;
  const std::string path = dir.file("notify.sock");
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  ::setenv("NOTIFY_SOCKET", path.c_str(), 1);
  const auto next = [&] {
    char buffer[512] = {};
    const auto n = ::recv(fd, buffer, sizeof buffer - 1, MSG_DONTWAIT);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string("(nothing)");
  };
  daemon::notify_ready("serving, 0 waiting");
  CHECK(next() == "READY=1\nSTATUS=serving, 0 waiting");
  daemon::notify_watchdog();
  CHECK(next() == "WATCHDOG=1");
  daemon::notify_stopping();
  CHECK(next() == "STOPPING=1\nSTATUS=stopping");
  ::unsetenv("NOTIFY_SOCKET");
  daemon::notify_status("unheard");  // without systemd: nothing, no error
  CHECK(next() == "(nothing)");
  ::close(fd);
}

TEST_CASE("notify: the watchdog interval is half of WatchdogSec for this process only", "[notify]") {
  ::unsetenv("WATCHDOG_USEC");
  CHECK_FALSE(daemon::watchdog_ping_interval());
  ::setenv("WATCHDOG_USEC", "4000000", 1);
  ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
  CHECK(daemon::watchdog_ping_interval() == std::chrono::microseconds(2000000));
  ::setenv("WATCHDOG_PID", "1", 1);  // meant for another process
  CHECK_FALSE(daemon::watchdog_ping_interval());
  ::unsetenv("WATCHDOG_USEC");
  ::unsetenv("WATCHDOG_PID");
}
