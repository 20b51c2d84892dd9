#include "mcp/server_core.h"

#include <utility>

#include <boost/asio/post.hpp>

namespace dispatchd::mcp {

namespace asio = boost::asio;
using Clock = Session::Clock;

ServerCore::ServerCore(asio::io_context& io, Settings settings, std::function<void(const ServerStatus&)> on_status,
                       std::function<void(std::string)> on_log)
    : m_io(io),
      m_settings(std::move(settings)),
      m_on_status(std::move(on_status)),
      m_on_log(std::move(on_log)),
      m_deadline(io),
      m_restart(io) {}

void ServerCore::log(std::string line) {
  if (m_on_log) m_on_log("mcp server " + m_settings.name + ": " + std::move(line));
}

void ServerCore::launch() {
  if (m_stopped) return;
  if (m_started_once) ++m_status.restarts;
  m_started_once = true;
  ++m_generation;
  if (!open()) return;
  m_session = std::make_unique<Session>(m_settings.session);
  apply(m_session->start(Clock::now()), /*initialize=*/true);
}

void ServerCore::apply(Step step, bool initialize) {
  const auto keep = shared_from_this();  // a callback below may drop the owner
  for (auto& text : step.send) send_text(std::move(text), initialize);
  for (auto& event : step.events) {
    if (auto* listed = std::get_if<ToolsListed>(&event)) {
      m_failures_in_a_row = 0;
      m_status.up = true;
      m_status.why.clear();
      m_status.protocol_version = std::string(listed->protocol_version);
      m_status.server_name = listed->hello.name;
      m_status.tools = std::move(listed->tools);
      if (m_on_status) m_on_status(m_status);
    } else if (auto* done = std::get_if<CallDone>(&event)) {
      finish(done->tag, std::move(done->result));
    } else if (auto* failed = std::get_if<SessionFailed>(&event)) {
      log(failed->why);
      on_session_failed(failed->why);
      return;
    }
  }
  arm_deadline();
}

void ServerCore::finish(CallTag tag, CallResult result) {
  const auto it = m_calls.find(tag);
  if (it == m_calls.end()) return;
  Done done = std::move(it->second);
  m_calls.erase(it);
  done(std::move(result));
}

void ServerCore::arm_deadline() {
  const auto next = m_session ? m_session->next_deadline() : std::nullopt;
  if (!next) {
    m_deadline.cancel();
    return;
  }
  m_deadline.expires_at(*next);
  std::weak_ptr<ServerCore> weak = shared_from_this();
  m_deadline.async_wait([weak](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || !self->m_session) return;
    self->apply(self->m_session->on_tick(Clock::now()));
  });
}

void ServerCore::end_session(const std::string& why) {
  if (m_session) {
    auto step = m_session->close(why);
    m_session.reset();
    ++m_generation;
    for (auto& event : step.events)
      if (auto* done = std::get_if<CallDone>(&event)) finish(done->tag, std::move(done->result));
  }
  m_deadline.cancel();
}

void ServerCore::down(std::string why, bool retry) {
  const auto keep = shared_from_this();
  end_session(why);
  const bool was_up = m_status.up;
  m_status.up = false;
  m_status.why = why;
  m_status.tools.clear();
  if (m_on_status) m_on_status(m_status);
  if (was_up || m_failures_in_a_row == 0) log("down: " + why);
  if (m_stopped || !retry) return;
  ++m_failures_in_a_row;
  m_restart.expires_after(exponential_backoff(m_settings.restart, m_failures_in_a_row));
  std::weak_ptr<ServerCore> weak = shared_from_this();
  m_restart.async_wait([weak](const boost::system::error_code& ec) {
    if (auto self = weak.lock(); self && !ec) self->launch();
  });
}

void ServerCore::call(std::string_view tool, std::string_view arguments_json, std::string_view idempotency_key,
                      Done done) {
  if (!m_session) {
    asio::post(m_io, [done = std::move(done), why = m_status.why]() mutable {
      done(std::unexpected(CallError{CallErrorKind::not_sent, "the MCP server is down: " + why}));
    });
    return;
  }
  const CallTag tag = m_next_tag++;
  m_calls.emplace(tag, std::move(done));
  apply(m_session->call(tag, tool, arguments_json, idempotency_key, Clock::now()));
}

void ServerCore::stop() {
  m_stopped = true;
  m_restart.cancel();
  end_session("dispatchd is stopping");
  close();
}

void ServerCore::abandon() {
  m_stopped = true;
  ++m_generation;
  m_on_status = nullptr;
  m_on_log = nullptr;
  m_calls.clear();  // dropped uncalled: the owner is gone
  m_restart.cancel();
  m_deadline.cancel();
  drop();
}

ServerHandle::ServerHandle(std::shared_ptr<ServerCore> core) : m_core(std::move(core)) {}

ServerHandle::~ServerHandle() { m_core->abandon(); }

void ServerHandle::start() { m_core->launch(); }

void ServerHandle::call(std::string_view tool, std::string_view arguments_json, std::string_view idempotency_key,
                        Done done) {
  m_core->call(tool, arguments_json, idempotency_key, std::move(done));
}

void ServerHandle::stop() { m_core->stop(); }

const ServerStatus& ServerHandle::status() const { return m_core->status(); }

}  // namespace dispatchd::mcp
