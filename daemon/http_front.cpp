#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "daemon/http_front.h"

#include "common/thread_name.h"

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace dispatchd::daemon {

namespace asio = boost::asio;

namespace {

// The loop's side of a response that stays open: writes are posted to the listener's
// thread. A write that fails there (the client went away or fell behind) shows in the
// next call, not in the one that queued it.
class PostedStream final : public Stream {
 public:
  PostedStream(std::shared_ptr<asio::io_context> net, std::shared_ptr<Stream> real)
      : m_net(std::move(net)), m_real(std::move(real)) {}
  bool write(std::string bytes) override {
    if (!*m_open) return false;
    asio::post(*m_net, [real = m_real, open = m_open, bytes = std::move(bytes)]() mutable {
      if (!real->write(std::move(bytes))) *open = false;
    });
    return true;
  }
  bool open() const override { return *m_open; }
  void close() override {
    if (!m_open->exchange(false)) return;
    asio::post(*m_net, [real = m_real] { real->close(); });
  }

 private:
  std::shared_ptr<asio::io_context> m_net;
  std::shared_ptr<Stream> m_real;  // a SessionStream: only a weak reference, safe to drop anywhere
  std::shared_ptr<std::atomic<bool>> m_open = std::make_shared<std::atomic<bool>>(true);
};

}  // namespace

struct HttpFront::State : std::enable_shared_from_this<State> {
  asio::io_context& loop;
  Handler handler;
  // FrontThread::own: the listener's io_context and thread. Shared with the tickets below,
  // which may outlive this State on the loop's thread.
  std::shared_ptr<asio::io_context> net;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;
  std::unique_ptr<HttpServer> server;
  std::uint16_t port = 0;

  std::mutex mutex;
  std::optional<std::string> unavailable;  // guarded by `mutex`

  // The listener's thread only: requests handed to the loop, by ticket.
  std::uint64_t next_ticket = 0;
  std::unordered_map<std::uint64_t, Respond> waiting;

  State(asio::io_context& loop_, Handler handler_) : loop(loop_), handler(std::move(handler_)) {}

  std::optional<std::string> unavailable_reason() {
    std::lock_guard lock(mutex);
    return unavailable;
  }

  void on_request(const Request& request, Respond respond);
  void deliver(std::uint64_t ticket, Response response);
  Respond reply(std::uint64_t ticket);
};

void HttpFront::State::on_request(const Request& request, Respond respond) {
  if (request.path != "/healthz") {
    if (auto reason = unavailable_reason()) {
      return respond(Response{
          503, "database unavailable: " + *reason + "\n", "text/plain; charset=utf-8", {{"Retry-After", "5"}}, {}});
    }
  }
  if (!net) return handler(request, std::move(respond));
  const std::uint64_t ticket = ++next_ticket;
  waiting.emplace(ticket, std::move(respond));
  asio::post(loop, [weak = weak_from_this(), request, ticket] {
    if (auto self = weak.lock()) self->handler(request, self->reply(ticket));
  });
}

// The loop's Respond for a request handed over: posts the answer back. Dropped unanswered,
// it lets the listener drop its Respond too (the connection then closes, as HttpServer does
// for a handler that forgets to answer).
Respond HttpFront::State::reply(std::uint64_t ticket) {
  struct Ticket {
    std::weak_ptr<State> state;
    std::shared_ptr<asio::io_context> net;
    std::uint64_t id = 0;
    bool answered = false;
    ~Ticket() {
      if (answered) return;
      asio::post(*net, [state = state, id = id] {
        if (auto s = state.lock()) s->waiting.erase(id);
      });
    }
  };
  // Built in place: a temporary Ticket's destructor would drop the request.
  auto held = std::make_shared<Ticket>();
  held->state = weak_from_this();
  held->net = net;
  held->id = ticket;
  return [held](Response response) {
    if (std::exchange(held->answered, true)) return;
    asio::post(*held->net, [state = held->state, id = held->id, response = std::move(response)]() mutable {
      if (auto s = state.lock()) s->deliver(id, std::move(response));
    });
  };
}

void HttpFront::State::deliver(std::uint64_t ticket, Response response) {
  const auto it = waiting.find(ticket);
  if (it == waiting.end()) return;
  Respond respond = std::move(it->second);
  waiting.erase(it);
  if (response.on_stream) {
    response.on_stream = [weak = weak_from_this(),
                          on_stream = std::move(response.on_stream)](std::shared_ptr<Stream> real) {
      const auto self = weak.lock();
      if (!self) return;
      auto posted = std::make_shared<PostedStream>(self->net, std::move(real));
      asio::post(self->loop, [on_stream, posted] { on_stream(posted); });
    };
  }
  respond(std::move(response));
}

HttpFront::HttpFront(asio::io_context& loop, HttpLimits limits, Handler handler, FrontThread thread)
    : m_state(std::make_shared<State>(loop, std::move(handler))) {
  auto& s = *m_state;
  if (thread == FrontThread::own) s.net = std::make_shared<asio::io_context>(1);
  // The server holds the State weakly: the State owns the server.
  s.server = std::make_unique<HttpServer>(s.net ? *s.net : loop, limits,
                                          [weak = std::weak_ptr<State>(m_state)](const Request& r, Respond respond) {
                                            if (auto self = weak.lock()) self->on_request(r, std::move(respond));
                                          });
}

HttpFront::~HttpFront() {
  auto& s = *m_state;
  if (!s.net) return;
  if (s.thread.joinable()) {
    s.work.reset();
    s.net->stop();
    s.thread.join();
  }
  // No thread runs the listener's io_context now: the server and the Responds waiting for
  // the loop (their connections) go here, on the loop's thread.
  s.waiting.clear();
  s.server.reset();
}

std::expected<void, std::string> HttpFront::listen(const std::string& host, std::uint16_t port) {
  auto& s = *m_state;
  if (auto ok = s.server->listen(host, port); !ok) return ok;
  s.port = s.server->port();
  if (s.net) {
    // Started after the bind: until now this thread was the only one touching the server.
    s.work.emplace(s.net->get_executor());
    s.thread = std::thread([net = s.net] {
      common::name_this_thread("http-listener");
      net->run();
    });
  }
  return {};
}

std::uint16_t HttpFront::port() const { return m_state->port; }

void HttpFront::stop() {
  auto& s = *m_state;
  if (!s.net || !s.thread.joinable()) return s.server->stop();
  asio::post(*s.net, [weak = std::weak_ptr<State>(m_state)] {
    if (auto self = weak.lock()) self->server->stop();
  });
}

std::size_t HttpFront::connections() const { return m_state->server->connections(); }
std::size_t HttpFront::answering() const { return m_state->server->answering(); }

void HttpFront::set_unavailable(std::optional<std::string> reason) {
  std::lock_guard lock(m_state->mutex);
  m_state->unavailable = std::move(reason);
}

}  // namespace dispatchd::daemon
