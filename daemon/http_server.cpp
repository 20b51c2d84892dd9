#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "daemon/http_server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <deque>
#include <list>
#include <map>

#include "daemon/internal/http_parser.h"

namespace dispatchd::daemon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// A connection that can be closed from outside: what the listener closes when it stops.
class Closable {
 public:
  virtual ~Closable() = default;
  virtual void close() = 0;
};

// How far behind a streaming client may fall before it is dropped: events are small, so
// this many queued bytes means the client stopped reading.
constexpr std::size_t k_max_stream_backlog = 256 * 1024;

// The first read of a connection, before the HTTP parser takes over what it read.
constexpr std::size_t k_first_read = 4096;

// How long the listener pauses after a failed accept (out of descriptors, say) before it
// accepts again: retrying at once would spin on the same error.
constexpr auto k_accept_retry = std::chrono::milliseconds(100);

}  // namespace

struct HttpServer::State : std::enable_shared_from_this<State> {
  asio::io_context& io;
  HttpLimits limits;
  Handler handler;
  tcp::acceptor acceptor;
  // Written on the io_context's thread, read from any (HttpServer::connections(), answering()).
  std::atomic<std::size_t> open = 0;
  std::atomic<std::size_t> answering = 0;  // requests read whose answer is not written yet
  bool stopping = false;
  std::vector<std::weak_ptr<Closable>> streams;          // open streaming responses
  std::map<asio::ip::address, std::size_t> per_address;  // open connections by client address
  // Connections waiting for the client (for a first byte, the rest of a request, or the
  // next kept-alive request), the longest waiting first: what a new client may evict at
  // the global cap. A connection whose request is being answered is never here.
  std::list<Closable*> waiting;
  asio::steady_timer accept_retry;

  State(asio::io_context& io_, HttpLimits limits_, Handler handler_)
      : io(io_), limits(limits_), handler(std::move(handler_)), acceptor(io_), accept_retry(io_) {}

  void accept();
  // Closes the connection that has waited longest for its client; false when none waits.
  bool evict_longest_waiting();
};

namespace {

class Session : public Closable, public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<HttpServer::State> state, asio::ip::address peer)
      : m_stream(std::move(socket)), m_state(std::move(state)), m_peer(peer) {
    ++m_state->open;
    ++m_state->per_address[m_peer];
  }
  ~Session() {
    release();
    if (m_answering) --m_state->answering;  // the handler dropped its Respond
  }

  void start(bool refuse) {
    if (refuse) {
      // Over a connection cap: one 503, then close.
      return send(error(503, "too many connections\n"), false);
    }
    // A connection that sends nothing is dropped after the first-byte deadline, well before
    // the read deadline, so idle connections cannot hold the slots for long.
    wait_for_client();
    m_stream.expires_after(m_state->limits.first_byte_timeout);
    m_stream.async_read_some(m_buffer.prepare(k_first_read),
                             [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                               if (ec) return self->close();
                               self->m_buffer.commit(n);
                               self->read(self->m_state->limits.read_timeout);
                             });
  }

 private:
  using StringResponse = http::response<http::string_body>;

  void read(std::chrono::seconds deadline) {
    m_parser.emplace();
    configure(*m_parser, m_state->limits);
    wait_for_client();
    m_stream.expires_after(deadline);
    http::async_read(m_stream, m_buffer, *m_parser,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  StringResponse error(unsigned status, std::string text) {
    StringResponse response{static_cast<http::status>(status), 11};
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    response.body() = std::move(text);
    return response;
  }

  void on_read(beast::error_code ec) {
    stop_waiting();
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted) {
      return close();
    }
    if (ec == http::error::body_limit) return send(error(413, "request body too large\n"), false);
    if (ec == http::error::header_limit) return send(error(431, "request header too large\n"), false);
    if (ec) return send(error(400, "bad request\n"), false);

    const auto& message = m_parser->get();
    const Request request = to_request(message);
    const unsigned version = message.version();
    const bool keep_alive = message.keep_alive();
    m_answering = true;
    ++m_state->answering;
    m_state->handler(request, [self = shared_from_this(), version, keep_alive](Response handled) {
      if (handled.on_stream) return self->start_stream(std::move(handled), version);
      StringResponse response{static_cast<http::status>(handled.status), version};
      response.set(http::field::content_type, handled.content_type);
      for (const auto& [name, value] : handled.headers) response.set(name, value);
      response.body() = std::move(handled.body);
      self->send(std::move(response), keep_alive && !self->m_state->stopping);
    });
  }

  void send(StringResponse response, bool keep_alive) {
    response.keep_alive(keep_alive);
    response.set(http::field::server, "dispatchd");
    response.prepare_payload();
    m_response = std::make_unique<StringResponse>(std::move(response));
    m_stream.expires_after(m_state->limits.read_timeout);
    http::async_write(m_stream, *m_response,
                      [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
                        self->m_response.reset();
                        if (std::exchange(self->m_answering, false)) --self->m_state->answering;
                        if (ec || !keep_alive) return self->close();
                        self->read(self->m_state->limits.idle_timeout);
                      });
  }

  // A response that stays open: the head without a length, then the stream's writes.
  void start_stream(Response handled, unsigned version) {
    m_head.emplace(static_cast<http::status>(handled.status), version);
    m_head->set(http::field::content_type, handled.content_type);
    for (const auto& [name, value] : handled.headers) m_head->set(name, value);
    m_head->set(http::field::server, "dispatchd");
    m_head->keep_alive(false);
    m_head_writer.emplace(*m_head);
    m_stream.expires_after(m_state->limits.read_timeout);
    http::async_write_header(
        m_stream, *m_head_writer,
        [self = shared_from_this(), on_stream = std::move(handled.on_stream)](beast::error_code ec, std::size_t) {
          if (std::exchange(self->m_answering, false)) --self->m_state->answering;
          if (ec || self->m_state->stopping) return self->close();
          auto& streams = self->m_state->streams;
          std::erase_if(streams, [](const auto& weak) { return weak.expired(); });
          streams.push_back(self);
          self->watch_peer();
          on_stream(std::make_shared<SessionStream>(self));
        });
  }

  // The only way to learn that a streaming client went away is a read that fails.
  void watch_peer() {
    m_stream.socket().async_read_some(asio::buffer(m_peek),
                                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                                        if (ec) return self->close();
                                        self->watch_peer();
                                      });
  }

  bool stream_write(std::string bytes) {
    if (m_closed) return false;
    m_backlog += bytes.size();
    if (m_backlog > k_max_stream_backlog) {
      close();
      return false;
    }
    m_queue.push_back(std::move(bytes));
    if (m_queue.size() == 1) write_next();
    return true;
  }

  void write_next() {
    m_stream.expires_after(m_state->limits.read_timeout);
    asio::async_write(m_stream, asio::buffer(m_queue.front()),
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        self->m_backlog -= self->m_queue.front().size();
                        self->m_queue.pop_front();
                        if (ec) return self->close();
                        if (!self->m_queue.empty()) self->write_next();
                      });
  }

  class SessionStream : public Stream {
   public:
    explicit SessionStream(std::weak_ptr<Session> session) : m_session(std::move(session)) {}
    bool write(std::string bytes) override {
      const auto session = m_session.lock();
      return session && session->stream_write(std::move(bytes));
    }
    bool open() const override {
      const auto session = m_session.lock();
      return session && !session->m_closed;
    }
    void close() override {
      if (const auto session = m_session.lock()) session->close();
    }

   private:
    std::weak_ptr<Session> m_session;
  };

 public:
  void close() override {
    if (std::exchange(m_closed, true)) return;
    // The slot and the descriptor are free now, not when the last handler lets go.
    release();
    beast::error_code ignored;
    m_stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    m_stream.close();
  }

 private:
  beast::tcp_stream m_stream;
  beast::flat_buffer m_buffer;
  std::optional<RequestParser> m_parser;
  std::unique_ptr<StringResponse> m_response;
  std::shared_ptr<HttpServer::State> m_state;
  asio::ip::address m_peer;
  bool m_answering = false;
  bool m_closed = false;
  // Streaming responses only.
  std::optional<http::response<http::empty_body>> m_head;
  std::optional<http::response_serializer<http::empty_body>> m_head_writer;
  std::deque<std::string> m_queue;  // the front is being written
  std::size_t m_backlog = 0;        // bytes in m_queue
  std::array<char, 512> m_peek{};
  // This connection's place in State::waiting while it waits for its client.
  std::optional<std::list<Closable*>::iterator> m_waiting;
  bool m_released = false;

  // Joins the end of the waiting line (a connection already in it keeps its place: a
  // slowloris client's dribbled bytes do not make it young again).
  void wait_for_client() {
    if (!m_waiting) m_waiting = m_state->waiting.insert(m_state->waiting.end(), this);
  }
  void stop_waiting() {
    if (m_waiting) m_state->waiting.erase(*std::exchange(m_waiting, std::nullopt));
  }
  // Gives the connection's slot back, once: at close, or at destruction without a close.
  void release() {
    stop_waiting();
    if (std::exchange(m_released, true)) return;
    --m_state->open;
    if (const auto at = m_state->per_address.find(m_peer); at != m_state->per_address.end() && --at->second == 0)
      m_state->per_address.erase(at);
  }
};

}  // namespace

void HttpServer::State::accept() {
  acceptor.async_accept(io, [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || self->stopping) return;
    if (ec) {
      self->accept_retry.expires_after(k_accept_retry);
      return self->accept_retry.async_wait([self](beast::error_code wait_ec) {
        if (!wait_ec && !self->stopping) self->accept();
      });
    }
    beast::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec).address();
    const auto from_peer = self->per_address.find(peer);
    bool refuse = peer_ec || (from_peer != self->per_address.end() &&
                              from_peer->second >= self->limits.max_connections_per_address);
    // At the global cap a new client takes the slot of the connection that has waited
    // longest for its own client (idle, dribbling, or between kept-alive requests): those
    // are what an attack from many addresses fills the slots with, while a real request
    // arrives whole and is answered in milliseconds. Only when every slot is answering a
    // request is the new client refused.
    if (!refuse && self->open >= self->limits.max_connections) refuse = !self->evict_longest_waiting();
    std::make_shared<Session>(std::move(socket), self, peer)->start(refuse);
    self->accept();
  });
}

bool HttpServer::State::evict_longest_waiting() {
  if (waiting.empty()) return false;
  waiting.front()->close();  // leaves `waiting` and gives its slot back at once
  return true;
}

Handler answer_now(std::function<Response(const Request&)> handler) {
  return [handler = std::move(handler)](const Request& request, const Respond& respond) { respond(handler(request)); };
}

HttpServer::HttpServer(asio::io_context& io, HttpLimits limits, Handler handler)
    : m_state(std::make_shared<State>(io, limits, std::move(handler))) {}

HttpServer::~HttpServer() { stop(); }

std::expected<void, std::string> HttpServer::listen(const std::string& host, std::uint16_t port) {
  beast::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) return std::unexpected("http.listen: " + host + " is not an IP address");
  const tcp::endpoint endpoint{address, port};
  auto& acceptor = m_state->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return std::unexpected("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  m_state->accept();
  return {};
}

std::uint16_t HttpServer::port() const {
  beast::error_code ec;
  const auto endpoint = m_state->acceptor.local_endpoint(ec);
  return ec ? 0 : endpoint.port();
}

void HttpServer::stop() {
  m_state->stopping = true;
  beast::error_code ignored;
  m_state->acceptor.close(ignored);
  m_state->accept_retry.cancel();
  // Streams never end by themselves: a stopping listener ends them.
  for (const auto& weak : std::exchange(m_state->streams, {})) {
    if (const auto stream = weak.lock()) stream->close();
  }
}

std::size_t HttpServer::connections() const { return m_state->open; }
std::size_t HttpServer::answering() const { return m_state->answering; }

}  // namespace dispatchd::daemon
