#include "mcp/http_client.h"

#include <map>
#include <utility>

#include <boost/asio/steady_timer.hpp>

namespace dispatchd::mcp {

namespace {

struct HttpServerCore final : ServerCore {
  HttpServerCore(boost::asio::io_context& io, net::Transport& t, HttpClientSettings s,
                 std::function<void(const ServerStatus&)> on_status, std::function<void(std::string)> on_log)
      : ServerCore(io, {s.name, s.session, s.restart}, std::move(on_status), std::move(on_log)),
        transport(t),
        endpoint(std::move(s.endpoint)),
        max_resumes(s.max_resumes) {}

  // A resuming GET's reading: the answer's messages go to the session as they arrive, and
  // the stream is let go once the answer to `id` is among them.
  struct Resumed {
    StreamedAnswer answer;
    bool answered = false;
  };

  net::Transport& transport;
  HttpEndpoint endpoint;
  int max_resumes;
  HttpSessionState state;
  int expiries_in_a_row = 0;
  // The waits before resuming GETs, by a number of their own (several requests may wait).
  std::map<std::uint64_t, std::unique_ptr<boost::asio::steady_timer>> resume_waits;
  std::uint64_t next_wait = 0;

  bool open() override {
    state = {};
    return true;
  }

  void send_text(std::string text, bool initialize) override {
    // The id of the request this text is, to end it at once when its POST fails.
    std::optional<RequestId> id;
    if (auto own = parse_message(text); own && own->kind == MessageKind::request)
      if (own->raw_id.find_first_not_of("0123456789") == std::string::npos) id = std::stoll(own->raw_id);
    if (session()) state.protocol_version = std::string(session()->protocol_version());
    const bool had_session = !state.session_id.empty();
    auto request = post_message(endpoint, state, std::move(text), initialize);
    std::weak_ptr<HttpServerCore> weak = std::static_pointer_cast<HttpServerCore>(shared_from_this());
    const std::uint64_t gen = generation();
    transport.send(std::move(request), [weak, gen, id, initialize, had_session](net::HttpResult result) {
      auto self = weak.lock();
      if (!self || self->generation() != gen || !self->session()) return;
      self->on_answer(read_http_answer(result, had_session), id, initialize);
    });
  }

  // The session's end, told to the server; its answer does not matter.
  void close() override {
    cancel_resumes();
    if (!state.session_id.empty()) transport.send(delete_session(endpoint, state), [](net::HttpResult) {});
  }
  // Answers and streams still to come find a newer generation, or no client.
  void drop() override { cancel_resumes(); }

  void cancel_resumes() {
    for (auto& [number, timer] : resume_waits) timer->cancel();
    resume_waits.clear();
  }

  // Hands `messages` to the session; whether one of them answers `awaited`.
  bool deliver(const std::vector<std::string>& messages, std::optional<RequestId> awaited) {
    bool answered = false;
    for (const auto& message : messages) {
      if (!session()) break;
      if (awaited && !answered) answered = answers(message, *awaited);
      apply(session()->on_message(message, Session::Clock::now()));
    }
    if (session() && session()->state() == Session::State::ready) expiries_in_a_row = 0;
    return answered;
  }

  // `ended`, an event stream, closed before the answer to `id`: the GET that resumes it, after
  // the delay the server asked for; or the call ends now when it cannot be resumed.
  void resume_later(RequestId id, StreamPosition at, const HttpOutcome& ended) {
    const auto delay = next_resume(at, ended, max_resumes);
    if (!delay) {
      apply(session()->undeliverable(id, CallError{CallErrorKind::unavailable, delay.error()}));
      return;
    }
    const std::uint64_t number = next_wait++;
    auto& timer = resume_waits[number];
    timer = std::make_unique<boost::asio::steady_timer>(io(), *delay);
    std::weak_ptr<HttpServerCore> weak = std::static_pointer_cast<HttpServerCore>(shared_from_this());
    timer->async_wait([weak, gen = generation(), number, id, at](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self) return;
      self->resume_waits.erase(number);
      if (self->generation() == gen && self->session()) self->resume(id, at);
    });
  }

  void resume(RequestId id, const StreamPosition& at) {
    auto request = resume_stream(endpoint, state, at.last_event_id);
    auto resumed = std::make_shared<Resumed>();
    std::weak_ptr<HttpServerCore> weak = std::static_pointer_cast<HttpServerCore>(shared_from_this());
    const std::uint64_t gen = generation();
    request.on_body = [weak, gen, resumed, id](const net::HttpResponse& head, std::string_view chunk) {
      auto self = weak.lock();
      if (!self || self->generation() != gen || !self->session()) return false;
      if (self->deliver(resumed->answer.feed(head, chunk), id)) resumed->answered = true;
      return !resumed->answered && !resumed->answer.refused();
    };
    transport.send(std::move(request), [weak, gen, resumed, id, at](net::HttpResult result) {
      auto self = weak.lock();
      if (!self || self->generation() != gen || !self->session() || resumed->answered) return;
      self->on_answer(resumed->answer.finish(result, true), id, false, at);
    });
  }

  void on_answer(HttpOutcome outcome, std::optional<RequestId> id, bool initialize, StreamPosition at = {}) {
    if (initialize && outcome.session_id) state.session_id = *outcome.session_id;
    switch (outcome.kind) {
      case HttpOutcomeKind::messages: {
        // Only an event stream may end before its answer; a JSON body is the answer.
        const bool answered = deliver(outcome.messages, outcome.event_stream ? id : std::nullopt);
        if (!answered && outcome.event_stream && id && session()) resume_later(*id, std::move(at), outcome);
        return;
      }
      case HttpOutcomeKind::accepted: return;
      case HttpOutcomeKind::session_expired:
        if (expiries_in_a_row++ == 0) {
          log("the session expired (" + outcome.why + "): initializing again");
          end_session("the MCP session expired");
          auto& status = mutable_status();
          status.up = false;  // until the new session has listed the tools
          status.why = "the MCP session expired; initializing again";
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
        if (id)
          apply(session()->undeliverable(*id, CallError{CallErrorKind::unavailable, outcome.why}));
        else
          log("a notification was not delivered: " + outcome.why);
        return;
    }
  }
};

}  // namespace

HttpClient::HttpClient(boost::asio::io_context& io, net::Transport& transport, HttpClientSettings settings,
                       std::function<void(const ServerStatus&)> on_status, std::function<void(std::string)> on_log)
    : ServerHandle(std::make_shared<HttpServerCore>(io, transport, std::move(settings), std::move(on_status),
                                                    std::move(on_log))) {}

}  // namespace dispatchd::mcp
