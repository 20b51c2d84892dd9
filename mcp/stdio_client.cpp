#include "mcp/stdio_client.h"

#include <map>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace dispatchd::mcp {

namespace asio = boost::asio;
using Clock = Session::Clock;

struct StdioClient::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io_, StdioClientSettings s, std::function<void(const ServerStatus&)> status_cb,
       std::function<void(std::string)> log_cb)
      : io(io_),
        settings(std::move(s)),
        on_status(std::move(status_cb)),
        on_log(std::move(log_cb)),
        deadline(io_),
        restart_timer(io_) {}

  asio::io_context& io;
  StdioClientSettings settings;
  std::function<void(const ServerStatus&)> on_status;
  std::function<void(std::string)> on_log;
  asio::steady_timer deadline;
  asio::steady_timer restart_timer;
  std::shared_ptr<StdioProcess> process;
  std::unique_ptr<Session> session;
  std::map<CallTag, Done> calls;
  CallTag next_tag = 1;
  ServerStatus status;
  int failures_in_a_row = 0;
  bool started_once = false;
  bool stopped = false;
  std::string failure;           // why the session failed, when it did: the reason the server is down
  std::uint64_t generation = 0;  // which process the callbacks belong to

  void log(std::string line) {
    if (on_log) on_log("mcp server " + settings.name + ": " + std::move(line));
  }

  void launch() {
    if (stopped) return;
    if (started_once) ++status.restarts;
    started_once = true;
    const std::uint64_t gen = ++generation;
    std::weak_ptr<Impl> weak = shared_from_this();
    StdioCallbacks callbacks{[weak, gen](std::string line) {
                               if (auto self = weak.lock(); self && self->generation == gen) self->on_line(line);
                             },
                             [weak, gen](std::string line) {
                               if (auto self = weak.lock(); self && self->generation == gen)
                                 self->log("stderr: " + line);
                             },
                             [weak, gen](std::string how) {
                               if (auto self = weak.lock(); self && self->generation == gen) self->on_exit(how);
                             }};
    auto started = StdioProcess::start(io, settings.command, settings.limits, std::move(callbacks));
    if (!started) return down(started.error());
    process = *started;
    session = std::make_unique<Session>(settings.session);
    apply(session->start(Clock::now()));
  }

  void on_line(const std::string& line) {
    if (session) apply(session->on_message(line, Clock::now()));
  }

  void on_exit(const std::string& how) {
    process.reset();
    const std::string why = failure.empty() ? "the server " + how : failure + " (the server " + how + ")";
    failure.clear();
    if (session) apply(session->close(why));
    if (!stopped) down(why);
  }

  // Carries a step out: its texts to the server, its events to the owner.
  void apply(Step step) {
    const auto keep = shared_from_this();  // a callback below may destroy the owner
    for (auto& text : step.send)
      if (process) process->send(std::move(text));
    for (auto& event : step.events) {
      if (auto* listed = std::get_if<ToolsListed>(&event)) {
        failures_in_a_row = 0;
        status.up = true;
        status.why.clear();
        status.protocol_version = std::string(listed->protocol_version);
        status.server_name = listed->hello.name;
        status.tools = std::move(listed->tools);
        if (on_status) on_status(status);
      } else if (auto* done = std::get_if<CallDone>(&event)) {
        finish(done->tag, std::move(done->result));
      } else if (auto* failed = std::get_if<SessionFailed>(&event)) {
        // The session cannot go on: end the process; its exit restarts it.
        log(failed->why);
        failure = failed->why;
        if (process) process->stop();
      }
    }
    arm_deadline();
  }

  void finish(CallTag tag, CallResult result) {
    const auto it = calls.find(tag);
    if (it == calls.end()) return;
    Done done = std::move(it->second);
    calls.erase(it);
    done(std::move(result));
  }

  void arm_deadline() {
    const auto next = session ? session->next_deadline() : std::nullopt;
    if (!next) {
      deadline.cancel();
      return;
    }
    deadline.expires_at(*next);
    std::weak_ptr<Impl> weak = shared_from_this();
    deadline.async_wait([weak](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || !self->session) return;
      self->apply(self->session->on_tick(Clock::now()));
    });
  }

  void down(std::string why) {
    const bool was_up = status.up;
    status.up = false;
    status.why = why;
    status.tools.clear();
    session.reset();
    deadline.cancel();
    if (on_status) on_status(status);
    if (was_up || failures_in_a_row == 0) log("down: " + why);
    if (stopped) return;
    ++failures_in_a_row;
    const auto wait = exponential_backoff(settings.restart, failures_in_a_row);
    restart_timer.expires_after(wait);
    std::weak_ptr<Impl> weak = shared_from_this();
    restart_timer.async_wait([weak](const boost::system::error_code& ec) {
      if (auto self = weak.lock(); self && !ec) self->launch();
    });
  }
};

StdioClient::StdioClient(asio::io_context& io, StdioClientSettings settings,
                         std::function<void(const ServerStatus&)> on_status, std::function<void(std::string)> on_log)
    : m_impl(std::make_shared<Impl>(io, std::move(settings), std::move(on_status), std::move(on_log))) {}

StdioClient::~StdioClient() {
  m_impl->stopped = true;
  m_impl->restart_timer.cancel();
  m_impl->deadline.cancel();
  // The process's destructor kills and reaps a server still running.
  m_impl->process.reset();
}

void StdioClient::start() { m_impl->launch(); }

void StdioClient::call(std::string_view tool, std::string_view arguments_json, std::string_view idempotency_key,
                       Done done) {
  auto& impl = *m_impl;
  if (!impl.session || !impl.process) {
    asio::post(impl.io, [done = std::move(done), why = impl.status.why]() mutable {
      done(std::unexpected(CallError{CallErrorKind::unavailable, "the MCP server is down: " + why}));
    });
    return;
  }
  const CallTag tag = impl.next_tag++;
  impl.calls.emplace(tag, std::move(done));
  impl.apply(impl.session->call(tag, tool, arguments_json, idempotency_key, Clock::now()));
}

void StdioClient::stop() {
  auto& impl = *m_impl;
  impl.stopped = true;
  impl.restart_timer.cancel();
  if (impl.session) impl.apply(impl.session->close("dispatchd is stopping"));
  impl.session.reset();
  if (impl.process) impl.process->stop();
}

const ServerStatus& StdioClient::status() const { return m_impl->status; }

}  // namespace dispatchd::mcp
