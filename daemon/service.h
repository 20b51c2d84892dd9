#pragma once
// The running daemon: one Asio event loop on one thread holding the store, the agent, the
// channels (connectors/channel.h, built from the configuration by wiring.h), the outbox
// pump that sends for all of them, the HTTP listener (which hands each channel's webhook
// path to it) and the timers. main() creates it, runs the loop and forwards signals.
//
// Start-up order: configuration, store (migrations, interrupted sends, leases), catalog and
// prompt, listener bound, channels started, then READY=1. SIGHUP reloads the catalog and
// the system prompt atomically: a bad file is refused and logged, the old ones stay.
// SIGTERM: STOPPING=1, stop accepting, finish in-flight work for up to `drain`, hand back
// what is left (leases released: the next start takes it at once), then the loop ends.

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>

#include "config/config.h"

namespace boost::asio {
class io_context;
}
namespace dispatchd::common {
class HandlerTimes;
}

namespace dispatchd::daemon {

class Service {
 public:
  // `loop_times`, when given, times the loop's handlers (main installs it on the loop's
  // thread, common/handler_timing.h): /metrics shows it, and steps over 10 ms are logged (a
  // line per 10 s at most, naming the longest); it must outlive the Service.
  [[nodiscard]] static std::expected<std::unique_ptr<Service>, std::string> create(
      config::Config config, boost::asio::io_context& io, common::HandlerTimes* loop_times = nullptr);
  ~Service();

  // Binds the listener, starts the agent, the channels and the timers, then notifies READY.
  [[nodiscard]] std::expected<void, std::string> start();
  // SIGHUP.
  void reload();
  // SIGTERM: calls `done` on the loop once drained (or after `drain`).
  void shutdown(std::chrono::seconds drain, std::function<void()> done);

  std::uint16_t port() const;

  struct Parts;

 private:
  explicit Service(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> m_parts;
};

}  // namespace dispatchd::daemon
