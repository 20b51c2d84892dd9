#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <optional>

#include "daemon/http_server.h"
#include "net/curl_transport.h"
#include "tests/io_run.h"

using namespace dispatchd;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

struct Server {
  explicit Server(daemon::HttpLimits limits = {})
      : server(io, limits, daemon::answer_now([this](const daemon::Request& r) {
                 seen.push_back(r);
                 return daemon::Response{201,
                                         "echo:" + r.method + " " + r.path + "?" + r.query + " " + r.body,
                                         "text/plain",
                                         {{"X-Test", "1"}}};
               })) {
    REQUIRE(server.listen("127.0.0.1", 0));
  }

  net::HttpResult call(net::HttpRequest request) {
    request.url = "http://127.0.0.1:" + std::to_string(server.port()) + request.url;
    std::optional<net::HttpResult> result;
    client.send(std::move(request), [&](net::HttpResult r) { result = std::move(r); });
    test::run_until(io, [&] { return result.has_value(); });
    return std::move(*result);
  }

  asio::io_context io;
  std::vector<daemon::Request> seen;
  daemon::HttpServer server;
  net::CurlTransport client{io};
};

}  // namespace

TEST_CASE("http server: routes a request to the handler with its raw body", "[http]") {
  Server s;
  net::HttpRequest request{"POST", "/webhooks/whatsapp?a=1", {{"X-Hub-Signature-256", "sha256=00"}}, "{\"é\":1}"};
  auto result = s.call(request);
  REQUIRE(result);
  CHECK(result->status == 201);
  CHECK(result->body == "echo:POST /webhooks/whatsapp?a=1 {\"é\":1}");
  CHECK(result->headers.get("X-Test") == "1");
  REQUIRE(s.seen.size() == 1);
  CHECK(s.seen[0].header("x-hub-signature-256") == "sha256=00");
}

TEST_CASE("http server: a body over the limit is 413 and never reaches the handler", "[http]") {
  daemon::HttpLimits limits;
  limits.max_body_bytes = 1024;
  Server s(limits);
  auto result = s.call({"POST", "/webhooks/whatsapp", {}, std::string(4096, 'x')});
  REQUIRE(result);
  CHECK(result->status == 413);
  CHECK(s.seen.empty());
}

TEST_CASE("http server: a header over the limit is 431", "[http]") {
  daemon::HttpLimits limits;
  limits.max_header_bytes = 1024;
  Server s(limits);
  auto result = s.call({"GET", "/healthz", {{"X-Big", std::string(4096, 'a')}}, ""});
  REQUIRE(result);
  CHECK(result->status == 431);
  CHECK(s.seen.empty());
}

TEST_CASE("http server: a slow client is dropped at the read deadline", "[http]") {
  daemon::HttpLimits limits;
  limits.read_timeout = 1s;
  Server s(limits);
  asio::ip::tcp::socket slow(s.io);
  slow.connect({asio::ip::make_address("127.0.0.1"), s.server.port()});
  asio::write(slow, asio::buffer(std::string("POST /webhooks/whatsapp HTTP/1.1\r\nHost: x\r\n")));  // and then nothing
  bool closed = false;
  char byte = 0;
  slow.async_read_some(asio::buffer(&byte, 1), [&](boost::system::error_code ec, std::size_t) { closed = bool(ec); });
  test::run_until(
      s.io, [&] { return closed; }, std::chrono::seconds(20));
  CHECK(closed);
  CHECK(s.seen.empty());
}

TEST_CASE("http server: past the connection cap with every slot answering, a client gets 503", "[http]") {
  asio::io_context io;
  std::vector<daemon::Respond> held;  // answers not given yet: the slot is busy, not idle
  daemon::HttpLimits limits;
  limits.max_connections = 1;
  daemon::HttpServer server(
      io, limits, [&](const daemon::Request&, daemon::Respond respond) { held.push_back(std::move(respond)); });
  REQUIRE(server.listen("127.0.0.1", 0));
  asio::ip::tcp::socket busy(io);
  busy.connect({asio::ip::make_address("127.0.0.1"), server.port()});
  asio::write(busy, asio::buffer(std::string("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")));
  test::run_until(io, [&] { return held.size() == 1; });
  net::CurlTransport client{io};
  std::optional<net::HttpResult> result;
  client.send({"GET", "http://127.0.0.1:" + std::to_string(server.port()) + "/healthz", {}, ""},
              [&](net::HttpResult r) { result = std::move(r); });
  test::run_until(io, [&] { return result.has_value(); });
  REQUIRE(*result);
  CHECK((*result)->status == 503);
  CHECK(held.size() == 1);
}

TEST_CASE("http server: at the connection cap a new client evicts the longest waiting connection", "[http]") {
  daemon::HttpLimits limits;
  limits.max_connections = 2;
  limits.first_byte_timeout = 600s;  // only an eviction can close these
  Server s(limits);
  const asio::ip::tcp::endpoint server{asio::ip::make_address("127.0.0.1"), s.server.port()};
  // Two idle connections from two addresses (the per-address cap is not what acts here);
  // the older one has also dribbled a byte, which does not make it younger.
  asio::ip::tcp::socket older(s.io);
  older.open(asio::ip::tcp::v4());
  older.bind({asio::ip::make_address("127.0.0.2"), 0});
  older.connect(server);
  test::run_until(s.io, [&] { return s.server.connections() == 1; });
  asio::ip::tcp::socket newer(s.io);
  newer.open(asio::ip::tcp::v4());
  newer.bind({asio::ip::make_address("127.0.0.3"), 0});
  newer.connect(server);
  test::run_until(s.io, [&] { return s.server.connections() == 2; });
  asio::write(older, asio::buffer(std::string("G")));
  bool older_closed = false;
  bool newer_closed = false;
  char byte[2] = {};
  older.async_read_some(asio::buffer(&byte[0], 1),
                        [&](boost::system::error_code ec, std::size_t) { older_closed = bool(ec); });
  newer.async_read_some(asio::buffer(&byte[1], 1),
                        [&](boost::system::error_code ec, std::size_t) { newer_closed = bool(ec); });

  auto result = s.call({"GET", "/healthz", {}, ""});
  REQUIRE(result);
  CHECK(result->status == 201);
  test::run_until(s.io, [&] { return older_closed; });
  CHECK(older_closed);
  CHECK_FALSE(newer_closed);
  CHECK(s.server.connections() <= 2);
}

TEST_CASE("http server: a handler may answer later, and the kept-alive connection goes on", "[http]") {
  asio::io_context io;
  std::vector<daemon::Respond> waiting;
  daemon::HttpServer server(io, {}, [&](const daemon::Request& r, daemon::Respond respond) {
    if (r.path == "/now") return respond(daemon::Response{200, "now"});
    if (r.path == "/drop") return;  // a handler that never answers: the connection closes
    waiting.push_back(std::move(respond));
  });
  REQUIRE(server.listen("127.0.0.1", 0));
  net::CurlTransport client{io};
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  std::optional<net::HttpResult> later;
  client.send({"POST", base + "/later", {}, "x"}, [&](net::HttpResult r) { later = std::move(r); });
  test::run_until(io, [&] { return waiting.size() == 1; });
  CHECK_FALSE(later.has_value());
  CHECK(server.answering() == 1);  // what a draining daemon waits for
  waiting.front()(daemon::Response{202, "stored"});
  test::run_until(io, [&] { return later.has_value(); });
  test::run_until(io, [&] { return server.answering() == 0; });
  REQUIRE(*later);
  CHECK((*later)->status == 202);
  CHECK((*later)->body == "stored");
  std::optional<net::HttpResult> now;
  client.send({"GET", base + "/now", {}, ""}, [&](net::HttpResult r) { now = std::move(r); });
  test::run_until(io, [&] { return now.has_value(); });
  REQUIRE(*now);
  CHECK((*now)->body == "now");
  waiting.clear();  // the answered Respond kept this kept-alive connection's session alive
  std::optional<net::HttpResult> dropped;
  client.send({"GET", base + "/drop", {}, ""}, [&](net::HttpResult r) { dropped = std::move(r); });
  test::run_until(io, [&] { return dropped.has_value(); });
  CHECK_FALSE(dropped->has_value());
  CHECK(server.answering() == 0);
}

// Reads everything a raw client socket receives until the server closes it.
struct Reader {
  explicit Reader(asio::ip::tcp::socket& socket) : m_socket(socket) { read(); }
  std::string received;
  bool ended = false;

 private:
  void read() {
    m_socket.async_read_some(asio::buffer(m_buffer), [this](boost::system::error_code ec, std::size_t n) {
      received.append(m_buffer.data(), n);
      if (ec) {
        ended = true;
        return;
      }
      read();
    });
  }
  asio::ip::tcp::socket& m_socket;
  std::array<char, 1024> m_buffer{};
};

// A server whose every answer is a stream (Server-Sent Events), handed to the test.
struct StreamServer {
  asio::io_context io;
  std::shared_ptr<daemon::Stream> stream;
  daemon::HttpServer server{io, {}, daemon::answer_now([this](const daemon::Request&) {
                              daemon::Response r{200, "", "text/event-stream", {{"Cache-Control", "no-cache"}}, {}};
                              r.on_stream = [this](std::shared_ptr<daemon::Stream> s) { stream = std::move(s); };
                              return r;
                            })};

  // Connects `client` and asks for the stream.
  void open(asio::ip::tcp::socket& client) {
    REQUIRE(server.listen("127.0.0.1", 0));
    client.connect({asio::ip::make_address("127.0.0.1"), server.port()});
    asio::write(client, asio::buffer(std::string("GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n")));
    test::run_until(io, [&] { return stream != nullptr; });
  }
};

TEST_CASE("http server: a streaming response stays open, writes as it goes, and ends when the server stops", "[http]") {
  StreamServer s;
  auto& [io, stream, server] = s;
  asio::ip::tcp::socket client(io);
  s.open(client);
  CHECK(server.answering() == 0);  // a stream is not an answer a draining daemon waits for
  CHECK(stream->open());
  CHECK(stream->write("data: one\n\n"));
  CHECK(stream->write("data: two\n\n"));
  Reader reader(client);
  const std::string& received = reader.received;
  test::run_until(io, [&] { return received.find("data: two\n\n") != std::string::npos; });
  CHECK(received.starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK(received.find("Content-Type: text/event-stream\r\n") != std::string::npos);
  CHECK(received.find("Content-Length") == std::string::npos);
  CHECK(received.find("Connection: close\r\n") != std::string::npos);
  CHECK(received.ends_with("\r\n\r\ndata: one\n\ndata: two\n\n"));
  server.stop();
  test::run_until(io, [&] { return reader.ended; });
  CHECK_FALSE(stream->open());
  CHECK_FALSE(stream->write("data: three\n\n"));
}

TEST_CASE("http server: a streaming client that hangs up is noticed", "[http]") {
  StreamServer s;
  auto& [io, stream, server] = s;
  {
    asio::ip::tcp::socket client(io);
    s.open(client);
  }
  test::run_until(io, [&] { return !stream->open(); });
  test::run_until(io, [&] { return server.connections() == 0; });
}

TEST_CASE("http server: one address cannot hold every connection, others are still served", "[http]") {
  daemon::HttpLimits limits;
  limits.max_connections_per_address = 2;
  Server s(limits);
  std::vector<asio::ip::tcp::socket> idle;
  for (int i = 0; i < 2; ++i) {
    idle.emplace_back(s.io);
    idle.back().connect({asio::ip::make_address("127.0.0.1"), s.server.port()});
  }
  test::run_until(s.io, [&] { return s.server.connections() == 2; });
  // A third from 127.0.0.1 is refused; a client from 127.0.0.2 (loopback too) is served.
  auto refused = s.call({"GET", "/healthz", {}, ""});
  REQUIRE(refused);
  CHECK(refused->status == 503);
  asio::ip::tcp::socket other(s.io);
  other.open(asio::ip::tcp::v4());
  other.bind({asio::ip::make_address("127.0.0.2"), 0});
  other.connect({asio::ip::make_address("127.0.0.1"), s.server.port()});
  asio::write(other, asio::buffer(std::string("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")));
  Reader reader(other);
  test::run_until(s.io, [&] { return reader.ended; });
  CHECK(reader.received.starts_with("HTTP/1.1 201"));
}

TEST_CASE("http server: a connection that sends nothing is dropped at the first-byte deadline", "[http]") {
  daemon::HttpLimits limits;
  limits.first_byte_timeout = 1s;
  limits.read_timeout = 600s;  // far beyond the run_until limit: only the first-byte deadline can close it
  Server s(limits);
  asio::ip::tcp::socket idle(s.io);
  idle.connect({asio::ip::make_address("127.0.0.1"), s.server.port()});
  bool closed = false;
  char byte = 0;
  idle.async_read_some(asio::buffer(&byte, 1), [&](boost::system::error_code ec, std::size_t) { closed = bool(ec); });
  test::run_until(
      s.io, [&] { return closed; }, std::chrono::seconds(30));
  CHECK(closed);
  CHECK(s.seen.empty());
  test::run_until(s.io, [&] { return s.server.connections() == 0; });
}
