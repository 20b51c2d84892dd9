#include "daemon/systemd_notify.h"

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include <cstdint>
#include <cstring>
#include <utility>

namespace dispatchd::daemon {
namespace {

void send(const std::string& state) {
  // 0: keep NOTIFY_SOCKET, so later calls still reach systemd. Without systemd it returns 0;
  // a failure to reach it is logged once (the service still runs; systemd may time it out).
  static bool told = false;
  if (const int rc = sd_notify(0, state.c_str()); rc < 0 && !std::exchange(told, true))
    spdlog::warn("sd_notify failed: {}", std::strerror(-rc));
}

}  // namespace

void notify_ready(const std::string& status) { send("READY=1\nSTATUS=" + status); }
void notify_status(const std::string& status) { send("STATUS=" + status); }
void notify_watchdog() { send("WATCHDOG=1"); }
void notify_stopping() { send("STOPPING=1\nSTATUS=stopping"); }

std::optional<std::chrono::microseconds> watchdog_ping_interval() {
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return std::chrono::microseconds(usec / 2);
}

}  // namespace dispatchd::daemon
