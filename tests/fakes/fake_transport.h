#pragma once
// A scripted net::Transport for unit tests that need no sockets: each send() records the
// request and answers with the next scripted result (a response or a transport error),
// through the io_context as the real transport does. An empty script answers with a
// transport error of kind `other`. A request with on_body gets a response's body handed over
// in chunks of stream_chunk bytes (its status and headers with each, as curl's does), then
// the response without its body; on_body's false ends it there. Single-threaded: use it from
// the io_context's thread.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <deque>
#include <string>
#include <vector>

#include "net/http.h"

namespace dispatchd::fakes {

class FakeTransport final : public net::Transport {
 public:
  explicit FakeTransport(boost::asio::io_context& io) : m_io(io) {}

  void push(net::HttpResult result) { m_script.push_back(std::move(result)); }
  void push_response(int status, std::string body, net::Headers headers = {}) {
    push(net::HttpResponse{status, std::move(headers), std::move(body)});
  }
  void push_error(net::TransportErrorKind kind, std::string message) {
    push(std::unexpected(net::TransportError{kind, std::move(message)}));
  }

  void send(net::HttpRequest request, net::HttpCallback done) override {
    m_requests.push_back(std::move(request));
    net::HttpResult result =
        std::unexpected(net::TransportError{net::TransportErrorKind::other, "fake transport: script ran out"});
    if (!m_script.empty()) {
      result = std::move(m_script.front());
      m_script.pop_front();
    }
    boost::asio::post(m_io, [done = std::move(done), result = std::move(result),
                             stream = std::move(m_requests.back().on_body), chunk = stream_chunk]() mutable {
      if (stream && result) {
        net::HttpResponse head{result->status, result->headers, {}};
        const std::string body = std::move(result->body);
        for (std::size_t at = 0; at < body.size(); at += chunk) {
          if (!stream(head, std::string_view(body).substr(at, chunk))) break;
        }
        result = std::move(head);
      }
      done(std::move(result));
    });
  }

  std::size_t stream_chunk = 16 * 1024;  // curl's usual write size

  const std::vector<net::HttpRequest>& requests() const { return m_requests; }

 private:
  boost::asio::io_context& m_io;
  std::deque<net::HttpResult> m_script;
  std::vector<net::HttpRequest> m_requests;
};

}  // namespace dispatchd::fakes
