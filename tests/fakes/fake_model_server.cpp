// Boost.Beast server in the shape of Beast's examples: a listener that accepts, one
// Session per connection looping read -> (optional delay) -> write, every step with a
// deadline. The script and the records live in State, guarded by its mutex, because the
// test thread reads them while the server thread writes them.
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "tests/fakes/fake_model_server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "tests/fakes/fake_bodies.h"

namespace dispatchd::fakes {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr std::size_t k_max_request_bytes = 16u << 20;
constexpr std::chrono::seconds k_io_deadline{30};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::string_view to_string(Dialect dialect) {
  switch (dialect) {
    case Dialect::openai: return "openai";
    case Dialect::gemini: return "gemini";
    case Dialect::anthropic: return "anthropic";
    case Dialect::unknown: break;
  }
  return "unknown";
}

FakeReply FakeReply::text(std::string output) {
  FakeReply reply;
  reply.output = std::move(output);
  return reply;
}

FakeReply FakeReply::truncated_text(std::string partial_output) {
  FakeReply reply = text(std::move(partial_output));
  reply.truncated = true;
  return reply;
}

FakeReply FakeReply::error(int status) {
  FakeReply reply;
  reply.status = status;
  return reply;
}

FakeReply FakeReply::raw(int status, std::string body) {
  FakeReply reply = error(status);
  reply.raw_body = std::move(body);
  return reply;
}

FakeReply& FakeReply::with_header(std::string name, std::string value) {
  headers.emplace_back(std::move(name), std::move(value));
  return *this;
}

FakeReply& FakeReply::after(std::chrono::milliseconds wait) {
  delay = wait;
  return *this;
}

std::string ReceivedRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key == name) return value;
  return {};
}

namespace {

// The script and what was observed; shared by every session.
class State {
 public:
  // Records `request` and picks its reply; model requests count as in flight until answered.
  FakeReply take(const ReceivedRequest& request, std::size_t& serial) {
    std::lock_guard lock(m_mutex);
    serial = ++m_count;
    if (m_recording) m_requests.push_back(request);
    if (request.dialect == Dialect::unknown) return FakeReply::raw(404, R"({"error":"no such route"})");
    m_max_in_flight = std::max(m_max_in_flight, ++m_in_flight);
    if (!m_queue.empty()) {
      FakeReply reply = std::move(m_queue.front());
      m_queue.pop_front();
      return reply;
    }
    if (m_responder) {
      if (auto reply = m_responder(request)) return std::move(*reply);
    }
    if (m_fallback) return *m_fallback;
    return FakeReply::raw(500, R"({"error":{"message":"fake script ran out of replies"}})");
  }

  void answered(Dialect dialect) {
    std::lock_guard lock(m_mutex);
    if (dialect != Dialect::unknown) --m_in_flight;
  }

  void push(FakeReply reply) {
    std::lock_guard lock(m_mutex);
    m_queue.push_back(std::move(reply));
  }

  void set_fallback(FakeReply reply) {
    std::lock_guard lock(m_mutex);
    m_fallback = std::move(reply);
  }

  void set_responder(Responder responder) {
    std::lock_guard lock(m_mutex);
    m_responder = std::move(responder);
  }

  void set_recording(bool on) {
    std::lock_guard lock(m_mutex);
    m_recording = on;
  }

  void hold_until_in_flight(std::size_t count, std::chrono::milliseconds cap) {
    std::lock_guard lock(m_mutex);
    m_gate_size = count;
    m_gate_cap = cap;
    m_held.clear();
  }

  // Called for each model request after take(). Returns the cap to wait for when the request
  // is held at the gate; `release` then answers it early. The request that fills the gate is
  // not held: it releases the others (outside the lock) and opens the gate for good.
  std::optional<std::chrono::milliseconds> hold(std::function<void()> release) {
    {
      std::lock_guard lock(m_mutex);
      if (m_gate_size == 0) return std::nullopt;
      if (m_held.size() + 1 < m_gate_size) {
        m_held.push_back(std::move(release));
        return m_gate_cap;
      }
    }
    open_gate();
    return std::nullopt;
  }

  // Releases every held request and stops holding.
  void open_gate() {
    std::vector<std::function<void()>> released;
    {
      std::lock_guard lock(m_mutex);
      released.swap(m_held);
      m_gate_size = 0;
    }
    for (auto& r : released) r();
  }

  std::vector<ReceivedRequest> requests() const {
    std::lock_guard lock(m_mutex);
    return m_requests;
  }

  std::size_t request_count() const {
    std::lock_guard lock(m_mutex);
    return m_count;
  }

  std::size_t max_in_flight() const {
    std::lock_guard lock(m_mutex);
    return m_max_in_flight;
  }

 private:
  mutable std::mutex m_mutex;  // guards everything below
  std::deque<FakeReply> m_queue;
  std::optional<FakeReply> m_fallback;
  Responder m_responder;
  bool m_recording = true;
  std::size_t m_count = 0;
  std::vector<ReceivedRequest> m_requests;
  std::size_t m_in_flight = 0;
  std::size_t m_max_in_flight = 0;
  std::size_t m_gate_size = 0;  // 0: no gate
  std::chrono::milliseconds m_gate_cap{0};
  std::vector<std::function<void()>> m_held;
};

ReceivedRequest to_record(const http::request<http::string_body>& req) {
  ReceivedRequest record;
  record.method = std::string(req.method_string());
  record.target = std::string(req.target());
  const std::string_view path = std::string_view(record.target).substr(0, record.target.find('?'));
  record.dialect = record.method == "POST" ? route(path) : Dialect::unknown;
  for (const auto& field : req)
    record.headers.emplace_back(lower(std::string(field.name_string())), std::string(field.value()));
  record.body = req.body();
  return record;
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, State& state)
      : m_stream(std::move(socket)), m_timer(m_stream.get_executor()), m_state(state) {}

  void read() {
    m_parser.emplace();
    m_parser->body_limit(k_max_request_bytes);
    m_stream.expires_after(k_io_deadline);
    http::async_read(m_stream, m_buffer, *m_parser,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    if (ec) return close();
    const auto received = std::chrono::steady_clock::now();
    const auto& req = m_parser->get();
    ReceivedRequest record = to_record(req);
    record.received = received;
    std::size_t serial = 0;
    const FakeReply reply = m_state.take(record, serial);
    m_dialect = record.dialect;
    m_response = {static_cast<http::status>(reply.status), req.version()};
    m_response.set(http::field::content_type, "application/json");
    for (const auto& [name, value] : reply.headers) m_response.set(name, value);
    m_response.keep_alive(req.keep_alive());
    m_response.body() = reply_body(record.dialect, reply, record, serial);
    m_response.prepare_payload();
    m_before_write = reply.before_write;
    m_drop = reply.drop;
    std::optional<std::chrono::milliseconds> held;
    if (m_dialect != Dialect::unknown)
      held = m_state.hold([weak = weak_from_this()] {
        if (auto self = weak.lock()) asio::post(self->m_stream.get_executor(), [self] { self->m_timer.cancel(); });
      });
    m_timer.expires_after(held.value_or(reply.delay));
    m_timer.async_wait([self = shared_from_this(), held = held.has_value()](beast::error_code waited) {
      if (held && !waited) self->m_state.open_gate();  // the cap passed: let the others go too
      self->write();
    });
  }

  void write() {
    if (m_drop) {
      // An abortive close: the client reads a reset, as from a provider whose proxy drops it.
      beast::error_code ignored;
      m_stream.socket().set_option(asio::socket_base::linger(true, 0), ignored);
      m_stream.socket().close(ignored);
      return;
    }
    m_state.answered(m_dialect);  // before the write: the client cannot have it earlier
    if (m_before_write) std::exchange(m_before_write, nullptr)();
    m_stream.expires_after(k_io_deadline);
    http::async_write(m_stream, m_response, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec || !self->m_response.keep_alive()) return self->close();
      self->read();
    });
  }

  void close() {
    beast::error_code ignored;
    m_stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream m_stream;
  asio::steady_timer m_timer;
  bool m_drop = false;
  State& m_state;
  beast::flat_buffer m_buffer;
  std::optional<http::request_parser<http::string_body>> m_parser;
  http::response<http::string_body> m_response;
  Dialect m_dialect = Dialect::unknown;
  std::function<void()> m_before_write;
};

}  // namespace

struct FakeModelServer::Impl {
  explicit Impl(unsigned short port) : acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), port)) {}

  void accept() {
    acceptor.async_accept(asio::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
      if (ec) return;  // the acceptor closed: the server is stopping
      ++connections;
      std::make_shared<Session>(std::move(socket), state)->read();
      accept();
    });
  }

  State state;
  std::atomic<std::size_t> connections{0};
  asio::io_context io{1};
  tcp::acceptor acceptor;
  std::thread thread;
};

FakeModelServer::FakeModelServer(unsigned short port) : m_impl(std::make_unique<Impl>(port)) {
  m_impl->accept();
  m_impl->thread = std::thread([impl = m_impl.get()] { impl->io.run(); });
}

FakeModelServer::~FakeModelServer() {
  m_impl->io.stop();
  m_impl->thread.join();
}

unsigned short FakeModelServer::port() const { return m_impl->acceptor.local_endpoint().port(); }

std::string FakeModelServer::base_url(Dialect dialect) const {
  const std::string root = "http://127.0.0.1:" + std::to_string(port());
  return dialect == Dialect::openai ? root + "/v1" : root;
}

void FakeModelServer::push(FakeReply reply) { m_impl->state.push(std::move(reply)); }
void FakeModelServer::set_fallback(FakeReply reply) { m_impl->state.set_fallback(std::move(reply)); }
void FakeModelServer::set_responder(Responder responder) { m_impl->state.set_responder(std::move(responder)); }
void FakeModelServer::set_recording(bool on) { m_impl->state.set_recording(on); }
void FakeModelServer::hold_until_in_flight(std::size_t count, std::chrono::milliseconds cap) {
  m_impl->state.hold_until_in_flight(count, cap);
}
std::vector<ReceivedRequest> FakeModelServer::requests() const { return m_impl->state.requests(); }
std::size_t FakeModelServer::request_count() const { return m_impl->state.request_count(); }
std::size_t FakeModelServer::max_in_flight() const { return m_impl->state.max_in_flight(); }
std::size_t FakeModelServer::connections_accepted() const { return m_impl->connections.load(); }

}  // namespace dispatchd::fakes
