#include "mcp/http_client.h"

#include <map>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace dispatchd::mcp {

namespace asio = boost::asio;
using Clock = Session::Clock;

struct HttpClient::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io_, net::Transport& transport_, HttpClientSettings s,
       std::function<void(const ServerStatus&)> status_cb, std::function<void(std::string)> log_cb)
      : io(io_),
        transport(transport_),
        settings(std::move(s)),
        on_status(std::move(status_cb)),
        on_log(std::move(log_cb)),
        deadline(io_),
        restart_timer(io_) {}

  asio::io_context& io;
  net::Transport& transport;
  HttpClientSettings settings;
  std::function<void(const ServerStatus&)> on_status;
  std::function<void(std::string)> on_log;
  asio::steady_timer deadline;
  asio::steady_timer restart_timer;
  std::unique_ptr<Session> session;
  HttpSessionState state;
  std::map<CallTag, Done> calls;
  CallTag next_tag = 1;
  ServerStatus status;
  int failures_in_a_row = 0;
  int expiries_in_a_row = 0;
  bool started_once = false;
  bool stopped = false;
  std::uint64_t generation = 0;  // which session the transport's answers belong to

  void log(std::string line) {
    if (on_log) on_log("mcp server " + settings.name + ": " + std::move(line));
  }

  void launch() {
    if (stopped) return;
    if (started_once) ++status.restarts;
    started_once = true;
    ++generation;
    state = {};
    session = std::make_unique<Session>(settings.session);
    apply(session->start(Clock::now()), /*initialize=*/true);
  }

  // Carries a step out: each text one POST, each event to the owner.
  void apply(Step step, bool initialize = false) {
    const auto keep = shared_from_this();  // a callback below may destroy the owner
    for (auto& text : step.send) post(std::move(text), initialize);
    for (auto& event : step.events) {
      if (auto* listed = std::get_if<ToolsListed>(&event)) {
        failures_in_a_row = 0;
        expiries_in_a_row = 0;
        status.up = true;
        status.why.clear();
        status.protocol_version = std::string(listed->protocol_version);
        status.server_name = listed->hello.name;
        status.tools = std::move(listed->tools);
        if (on_status) on_status(status);
      } else if (auto* done = std::get_if<CallDone>(&event)) {
        finish(done->tag, std::move(done->result));
      } else if (auto* failed = std::get_if<SessionFailed>(&event)) {
        down(failed->why, /*retry=*/true);
        return;
      }
    }
    arm_deadline();
  }

  void post(std::string text, bool initialize) {
    // The id of the request this text is, to fail it at once when the POST fails.
    std::optional<RequestId> id;
    if (auto own = parse_message(text); own && own->kind == MessageKind::request)
      if (own->raw_id.find_first_not_of("0123456789") == std::string::npos) id = std::stoll(own->raw_id);
    if (session) state.protocol_version = std::string(session->protocol_version());
    const bool had_session = !state.session_id.empty();
    auto request = post_message(settings.endpoint, state, std::move(text), initialize);
    std::weak_ptr<Impl> weak = shared_from_this();
    const std::uint64_t gen = generation;
    transport.send(std::move(request), [weak, gen, id, initialize, had_session](net::HttpResult result) {
      auto self = weak.lock();
      if (!self || self->generation != gen || !self->session) return;
      self->on_answer(read_http_answer(result, had_session), id, initialize);
    });
  }

  void on_answer(HttpOutcome outcome, std::optional<RequestId> id, bool initialize) {
    if (initialize && outcome.session_id) state.session_id = *outcome.session_id;
    switch (outcome.kind) {
      case HttpOutcomeKind::messages:
        for (const auto& message : outcome.messages) {
          if (!session) return;
          apply(session->on_message(message, Clock::now()));
        }
        return;
      case HttpOutcomeKind::accepted: return;
      case HttpOutcomeKind::session_expired:
        if (expiries_in_a_row++ == 0) {
          log("the session expired (" + outcome.why + "): initializing again");
          end_session("the MCP session expired");
          status.up = false;  // until the new session has listed the tools
          status.why = "the MCP session expired; initializing again";
          if (on_status) on_status(status);
          launch();
        } else {
          down("the session expired again right after it began (" + outcome.why + ")", true);
        }
        return;
      case HttpOutcomeKind::unauthorized:
        down("the server refused the token (" + outcome.why + "); fix the credential and restart", false);
        return;
      case HttpOutcomeKind::unavailable:
      case HttpOutcomeKind::refused:
        if (id) {
          apply(session->undeliverable(*id, CallError{CallErrorKind::unavailable, outcome.why}));
        } else {
          log("a notification was not delivered: " + outcome.why);
        }
        return;
    }
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

  // Ends the current session: its calls fail, its answers still to come are ignored.
  void end_session(const std::string& why) {
    if (session) {
      auto step = session->close(why);
      session.reset();
      ++generation;
      for (auto& event : step.events)
        if (auto* done = std::get_if<CallDone>(&event)) finish(done->tag, std::move(done->result));
    }
    deadline.cancel();
  }

  void down(std::string why, bool retry) {
    const auto keep = shared_from_this();
    end_session(why);
    const bool was_up = status.up;
    status.up = false;
    status.why = why;
    status.tools.clear();
    if (on_status) on_status(status);
    if (was_up || failures_in_a_row == 0) log("down: " + why);
    if (stopped || !retry) return;
    ++failures_in_a_row;
    restart_timer.expires_after(exponential_backoff(settings.restart, failures_in_a_row));
    std::weak_ptr<Impl> weak = shared_from_this();
    restart_timer.async_wait([weak](const boost::system::error_code& ec) {
      if (auto self = weak.lock(); self && !ec) self->launch();
    });
  }
};

HttpClient::HttpClient(asio::io_context& io, net::Transport& transport, HttpClientSettings settings,
                       std::function<void(const ServerStatus&)> on_status, std::function<void(std::string)> on_log)
    : m_impl(std::make_shared<Impl>(io, transport, std::move(settings), std::move(on_status), std::move(on_log))) {}

HttpClient::~HttpClient() {
  m_impl->stopped = true;
  ++m_impl->generation;
  m_impl->restart_timer.cancel();
  m_impl->deadline.cancel();
}

void HttpClient::start() { m_impl->launch(); }

void HttpClient::call(std::string_view tool, std::string_view arguments_json, std::string_view idempotency_key,
                      Done done) {
  auto& impl = *m_impl;
  if (!impl.session) {
    asio::post(impl.io, [done = std::move(done), why = impl.status.why]() mutable {
      done(std::unexpected(CallError{CallErrorKind::unavailable, "the MCP server is down: " + why}));
    });
    return;
  }
  const CallTag tag = impl.next_tag++;
  impl.calls.emplace(tag, std::move(done));
  impl.apply(impl.session->call(tag, tool, arguments_json, idempotency_key, Clock::now()));
}

void HttpClient::stop() {
  auto& impl = *m_impl;
  impl.stopped = true;
  impl.restart_timer.cancel();
  const HttpSessionState last = impl.state;
  impl.end_session("dispatchd is stopping");
  // The session's end, told to the server; its answer does not matter.
  if (!last.session_id.empty())
    impl.transport.send(delete_session(impl.settings.endpoint, last), [](net::HttpResult) {});
}

const ServerStatus& HttpClient::status() const { return m_impl->status; }

}  // namespace dispatchd::mcp
