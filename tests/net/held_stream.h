#pragma once
// A server on 127.0.0.1 for streamed bodies: it takes one connection, answers its request
// with the start of an event stream ("data: one\n\n", no length) and then holds the stream
// open, sending nothing, until the client closes the connection or 10 s pass. Whatever waits
// for the body's end waits those 10 s; a streamed body does not.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

namespace dispatchd::test {

class HeldStream {
 public:
  HeldStream() {
    m_thread = std::thread([this] { serve(); });
  }
  ~HeldStream() {
    // Wakes an accept() still waiting (the test never connected).
    ::shutdown(m_acceptor.native_handle(), SHUT_RDWR);
    m_thread.join();
  }
  HeldStream(const HeldStream&) = delete;
  HeldStream& operator=(const HeldStream&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_acceptor.local_endpoint().port()) + "/"; }

  // Whether the client closed the connection, waiting up to 5 s for it.
  bool wait_closed_by_client() const {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!m_closed_by_client.load() && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return m_closed_by_client.load();
  }

 private:
  void serve() {
    boost::system::error_code ec;
    auto socket = m_acceptor.accept(ec);
    if (ec) return;
    timeval limit{10, 0};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    boost::asio::streambuf request;
    boost::asio::read_until(socket, request, "\r\n\r\n", ec);
    if (ec) return;
    const std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\ndata: one\n\n";
    boost::asio::write(socket, boost::asio::buffer(head), ec);
    // recv itself, not Asio's read_some: Asio waits again, without a limit, when the receive
    // timeout passes.
    char byte = 0;
    const auto got = ::recv(socket.native_handle(), &byte, 1, 0);
    m_closed_by_client = got == 0 || (got < 0 && errno == ECONNRESET);
  }

  boost::asio::io_context m_io;
  boost::asio::ip::tcp::acceptor m_acceptor{m_io, {boost::asio::ip::make_address("127.0.0.1"), 0}};
  std::atomic<bool> m_closed_by_client{false};
  std::thread m_thread;
};

}  // namespace dispatchd::test
