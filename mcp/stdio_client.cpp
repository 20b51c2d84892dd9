#include "mcp/stdio_client.h"

#include <utility>

namespace dispatchd::mcp {

namespace {

struct StdioServerCore final : ServerCore {
  StdioServerCore(boost::asio::io_context& io, StdioClientSettings s,
                  std::function<void(const ServerStatus&)> on_status, std::function<void(std::string)> on_log)
      : ServerCore(io, {s.name, s.session, s.restart}, std::move(on_status), std::move(on_log)),
        command(std::move(s.command)),
        limits(s.limits) {}

  StdioCommand command;
  StdioLimits limits;
  std::shared_ptr<StdioProcess> process;
  std::string failure;  // why the session failed, when it did: the reason the server is down

  std::shared_ptr<StdioServerCore> self() { return std::static_pointer_cast<StdioServerCore>(shared_from_this()); }

  bool open() override {
    std::weak_ptr<StdioServerCore> weak = self();
    const std::uint64_t gen = generation();
    const auto mine = [weak, gen]() -> std::shared_ptr<StdioServerCore> {
      auto locked = weak.lock();
      return locked && locked->generation() == gen ? locked : nullptr;
    };
    StdioCallbacks callbacks{[mine](std::string line) {
                               if (auto impl = mine(); impl && impl->session())
                                 impl->apply(impl->session()->on_message(line, Session::Clock::now()));
                             },
                             [mine](std::string line) {
                               if (auto impl = mine()) impl->log("stderr: " + line);
                             },
                             [mine](std::string how) {
                               if (auto impl = mine()) impl->on_exit(how);
                             }};
    auto started = StdioProcess::start(io(), command, limits, std::move(callbacks));
    if (!started) {
      down(started.error(), true);
      return false;
    }
    process = *started;
    return true;
  }

  void send_text(std::string text, bool) override {
    if (process) process->send(std::move(text));
  }
  void close() override {
    if (process) process->stop();
  }
  void drop() override { process.reset(); }  // its destructor kills and reaps a server still running

  // The process must end first: its exit brings the server down, with this reason.
  void on_session_failed(const std::string& why) override {
    failure = why;
    if (process) process->stop();
  }

  void on_exit(const std::string& how) {
    process.reset();
    const std::string why = failure.empty() ? "the server " + how : failure + " (the server " + how + ")";
    failure.clear();
    if (!stopped()) down(why, true);
  }
};

}  // namespace

StdioClient::StdioClient(boost::asio::io_context& io, StdioClientSettings settings,
                         std::function<void(const ServerStatus&)> on_status, std::function<void(std::string)> on_log)
    : ServerHandle(
          std::make_shared<StdioServerCore>(io, std::move(settings), std::move(on_status), std::move(on_log))) {}

}  // namespace dispatchd::mcp
