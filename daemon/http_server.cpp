#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "daemon/http_server.h"

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>

namespace dispatchd::daemon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::optional<std::string_view> Request::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return std::nullopt;
}

struct HttpServer::State : std::enable_shared_from_this<State> {
  asio::io_context& io;
  HttpLimits limits;
  Handler handler;
  tcp::acceptor acceptor;
  std::size_t open = 0;
  std::size_t answering = 0;  // requests read whose answer is not written yet
  bool stopping = false;

  State(asio::io_context& io_, HttpLimits limits_, Handler handler_)
      : io(io_), limits(limits_), handler(std::move(handler_)), acceptor(io_) {}

  void accept();
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<HttpServer::State> state)
      : m_stream(std::move(socket)), m_state(std::move(state)) {
    ++m_state->open;
  }
  ~Session() {
    --m_state->open;
    if (m_answering) --m_state->answering;  // the handler dropped its Respond
  }

  void start(bool refuse) {
    if (refuse) {
      // Over the connection cap: one 503, then close.
      return send(error(503, "too many connections\n"), false);
    }
    read(m_state->limits.read_timeout);
  }

 private:
  using StringResponse = http::response<http::string_body>;

  void read(std::chrono::seconds deadline) {
    m_parser.emplace();
    m_parser->header_limit(static_cast<std::uint32_t>(m_state->limits.max_header_bytes));
    m_parser->body_limit(m_state->limits.max_body_bytes);
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
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted) {
      return close();
    }
    if (ec == http::error::body_limit) return send(error(413, "request body too large\n"), false);
    if (ec == http::error::header_limit) return send(error(431, "request header too large\n"), false);
    if (ec) return send(error(400, "bad request\n"), false);

    const auto& message = m_parser->get();
    Request request;
    request.method = std::string(message.method_string());
    const std::string target(message.target());
    const auto question = target.find('?');
    request.path = target.substr(0, question);
    if (question != std::string::npos) request.query = target.substr(question + 1);
    for (const auto& field : message) {
      const auto name = field.name_string();
      const auto value = field.value();
      request.headers.emplace_back(lower(std::string_view(name.data(), name.size())),
                                   std::string(value.data(), value.size()));
    }
    request.body = message.body();

    const unsigned version = message.version();
    const bool keep_alive = message.keep_alive();
    m_answering = true;
    ++m_state->answering;
    m_state->handler(request, [self = shared_from_this(), version, keep_alive](Response handled) {
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

  void close() {
    beast::error_code ignored;
    m_stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    m_stream.close();
  }

  beast::tcp_stream m_stream;
  beast::flat_buffer m_buffer;
  std::optional<http::request_parser<http::string_body>> m_parser;
  std::unique_ptr<StringResponse> m_response;
  std::shared_ptr<HttpServer::State> m_state;
  bool m_answering = false;
};

}  // namespace

void HttpServer::State::accept() {
  acceptor.async_accept(io, [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || self->stopping) return;
    if (!ec) {
      const bool refuse = self->open >= self->limits.max_connections;
      std::make_shared<Session>(std::move(socket), self)->start(refuse);
    }
    self->accept();
  });
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
}

std::size_t HttpServer::connections() const { return m_state->open; }
std::size_t HttpServer::answering() const { return m_state->answering; }

}  // namespace dispatchd::daemon
