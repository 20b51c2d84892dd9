#pragma once
// The systemd notify protocol (sd_notify(3)) for Type=notify: READY=1 once serving,
// STATUS= with live counts, WATCHDOG=1 from the event loop (so a stuck loop stops the
// pings and systemd restarts the service), STOPPING=1 on shutdown. Without NOTIFY_SOCKET
// (not started by systemd) every call does nothing.

#include <chrono>
#include <optional>
#include <string>

namespace dispatchd::daemon {

void notify_ready(const std::string& status);
void notify_status(const std::string& status);
void notify_watchdog();
void notify_stopping();

// Half of WatchdogSec= when systemd asked for pings (WATCHDOG_USEC for this process), else
// nullopt.
std::optional<std::chrono::microseconds> watchdog_ping_interval();

}  // namespace dispatchd::daemon
