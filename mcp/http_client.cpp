#include "mcp/http_client.h"

#include <utility>

namespace dispatchd::mcp {

namespace {

struct HttpServerCore final : ServerCore {
  HttpServerCore(boost::asio::io_context& io, net::Transport& t, HttpClientSettings s,
                 std::function<void(const ServerStatus&)> on_status, std::function<void(std::string)> on_log)
      : ServerCore(io, {s.name, s.session, s.restart}, std::move(on_status), std::move(on_log)),
        transport(t),
        endpoint(std::move(s.endpoint)) {}

  net::Transport& transport;
  HttpEndpoint endpoint;
  HttpSessionState state;
  int expiries_in_a_row = 0;

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
    if (!state.session_id.empty()) transport.send(delete_session(endpoint, state), [](net::HttpResult) {});
  }
  void drop() override {}  // answers still to come find a newer generation, or no client

  void on_answer(HttpOutcome outcome, std::optional<RequestId> id, bool initialize) {
    if (initialize && outcome.session_id) state.session_id = *outcome.session_id;
    switch (outcome.kind) {
      case HttpOutcomeKind::messages:
        for (const auto& message : outcome.messages) {
          if (!session()) return;
          apply(session()->on_message(message, Session::Clock::now()));
        }
        if (session() && session()->state() == Session::State::ready) expiries_in_a_row = 0;
        return;
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
