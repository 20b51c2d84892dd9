#pragma once
// A net::Transport between an HTTP channel and the real transport to its fake provider,
// for the faults only the network makes: the requests `is_send` picks (the channel's
// sends) take the next scripted NetworkFault; everything else (polls, tokens, read
// receipts) passes through untouched. The fake provider scripts its own answers (errors,
// rate limits); this adds a connection refused before the request leaves, an answer lost
// after the fake took the request, and an answer held back until the test releases it.
// For the channel contract's harnesses (tests/connectors/channel_contract.h).
//
// Threading: the loop's thread only. Destroying it drops the held answers uncalled, and
// answers still on their way from the inner transport are dropped when they come.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "net/http.h"

namespace dispatchd::test {

enum class NetworkFault {
  none,
  refuse_connection,  // answered connect_failed at once; the request never reaches the fake
  drop_answer,        // the fake takes the request; its answer is replaced by a reset connection
  hold_answer,        // the fake takes the request; its answer waits for release_held()
};

class FaultTransport final : public net::Transport {
 public:
  using IsSend = std::function<bool(const net::HttpRequest&)>;

  // REQUIRES: `inner` outlives this transport.
  FaultTransport(boost::asio::io_context& io, net::Transport& inner, IsSend is_send)
      : m_state(std::make_shared<State>(io, inner, std::move(is_send))) {}

  // The fault of the next send request not yet faulted (first in, first out).
  void fault_next_send(NetworkFault fault) { m_state->faults.push_back(fault); }
  // Send requests passed on to the fake (a refused connection's excepted).
  std::size_t sends_forwarded() const { return m_state->forwarded; }
  // Answers of the fake held back (hold_answer).
  std::size_t held() const { return m_state->held.size(); }
  // Hands the held answers to their callbacks, through the loop.
  void release_held() {
    for (auto& held : std::exchange(m_state->held, {}))
      boost::asio::post(m_state->io, [held = std::move(held)]() mutable { held.done(std::move(held.result)); });
  }

  void send(net::HttpRequest request, net::HttpCallback done) override {
    State& s = *m_state;
    NetworkFault fault = NetworkFault::none;
    if (s.is_send(request)) {
      if (!s.faults.empty()) {
        fault = s.faults.front();
        s.faults.pop_front();
      }
      if (fault == NetworkFault::refuse_connection) {
        boost::asio::post(s.io, [done = std::move(done)]() mutable {
          done(std::unexpected(
              net::TransportError{net::TransportErrorKind::connect_failed, "connection refused (scripted)"}));
        });
        return;
      }
      ++s.forwarded;
    }
    s.inner.send(std::move(request),
                 [weak = std::weak_ptr<State>(m_state), fault, done = std::move(done)](net::HttpResult result) mutable {
                   auto self = weak.lock();
                   if (!self) return;
                   switch (fault) {
                     case NetworkFault::drop_answer:
                       return done(std::unexpected(net::TransportError{
                           net::TransportErrorKind::other, "connection reset after the request was sent (scripted)"}));
                     case NetworkFault::hold_answer: return self->held.push_back({std::move(done), std::move(result)});
                     case NetworkFault::none:
                     case NetworkFault::refuse_connection: break;
                   }
                   done(std::move(result));
                 });
  }

 private:
  struct Held {
    net::HttpCallback done;
    net::HttpResult result;
  };
  struct State {
    State(boost::asio::io_context& i, net::Transport& t, IsSend s) : io(i), inner(t), is_send(std::move(s)) {}
    boost::asio::io_context& io;
    net::Transport& inner;
    IsSend is_send;
    std::deque<NetworkFault> faults;
    std::size_t forwarded = 0;
    std::vector<Held> held;
  };
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::test
