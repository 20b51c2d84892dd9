// libcurl's multi interface on Asio. curl owns its sockets: it tells us through the
// socket callback which ones to watch, and we wrap each in a stream_descriptor only to
// wait for readiness. A descriptor is released (never closed) before curl closes the
// socket: the close-socket callback releases it first, so Asio never holds a dead or
// reused file descriptor.
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "net/curl_transport.h"

#include <unistd.h>

#include <curl/curl.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>

namespace dispatchd::net {
namespace {

namespace asio = boost::asio;
using Strand = asio::strand<asio::io_context::executor_type>;

// One in-flight exchange; owns its easy handle and everything curl points into.
struct Call {
  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  std::string body;  // CURLOPT_POSTFIELDS points here
  HttpCallback done;
  HttpResponse response;
  BodyChunk stream;          // set: the body goes here as it arrives (HttpRequest::on_body)
  std::size_t streamed = 0;  // bytes handed to `stream`
  bool stopped = false;      // `stream` asked to end the exchange
  std::size_t max_bytes = 0;
  bool too_large = false;
  char error[CURL_ERROR_SIZE] = {};

  Call() = default;
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  ~Call() {
    if (easy) curl_easy_cleanup(easy);
    curl_slist_free_all(header_list);
  }
};

// A socket curl asked us to watch. Shared with the pending waits, which outlive it when
// curl stops watching the socket while a wait is queued.
struct Socket {
  explicit Socket(Strand& strand) : descriptor(strand) {}
  asio::posix::stream_descriptor descriptor;
  int wanted = 0;  // CURL_POLL_IN / OUT / INOUT
  bool reading = false;
  bool writing = false;
  bool gone = false;
};

// A chunk for the request's own receiver. curl knows the status once the headers are in,
// before the first byte of the body.
std::size_t stream_body(Call& call, const char* data, std::size_t n) {
  if (call.streamed + n > call.max_bytes) {
    call.too_large = true;
    return 0;
  }
  call.streamed += n;
  if (call.response.status == 0) {
    long status = 0;
    curl_easy_getinfo(call.easy, CURLINFO_RESPONSE_CODE, &status);
    call.response.status = static_cast<int>(status);
  }
  if (!call.stream(call.response, std::string_view(data, n))) {
    call.stopped = true;
    return 0;  // CURLE_WRITE_ERROR, read as the end the receiver asked for (finish_done)
  }
  return n;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* call = static_cast<Call*>(user);
  const std::size_t n = size * count;
  if (call->stopped) return 0;
  if (call->stream) return stream_body(*call, data, n);
  if (call->response.body.size() + n > call->max_bytes) {
    call->too_large = true;
    return 0;  // curl stops the transfer with CURLE_WRITE_ERROR
  }
  call->response.body.append(data, n);
  return n;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* call = static_cast<Call*>(user);
  const std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    call->response.headers.clear();  // a new response (after 100 Continue or a redirect)
    call->response.status = 0;
  } else if (const auto colon = line.find(':'); colon != std::string_view::npos) {
    call->response.headers.add(std::string(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1))));
  }
  return size * count;
}

// Maps curl's result to ours: the one place that knows CURLcode.
TransportError from_curl(CURLcode code, const Call& call) {
  TransportErrorKind kind = TransportErrorKind::other;
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION: kind = TransportErrorKind::connect_failed; break;
    case CURLE_OPERATION_TIMEDOUT: kind = TransportErrorKind::timed_out; break;
    case CURLE_FILESIZE_EXCEEDED: kind = TransportErrorKind::too_large; break;
    case CURLE_WRITE_ERROR:
      if (call.too_large) kind = TransportErrorKind::too_large;
      break;
    default: break;
  }
  std::string message = curl_easy_strerror(code);
  if (kind == TransportErrorKind::too_large)
    message = "response larger than " + std::to_string(call.max_bytes) + " bytes";
  else if (call.error[0] != '\0')
    message += std::string(": ") + call.error;
  return {kind, std::move(message)};
}

void global_init() {
  static std::once_flag once;
  static CURLcode result = CURLE_OK;
  std::call_once(once, [] { result = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (result != CURLE_OK) throw std::runtime_error(std::string("curl_global_init: ") + curl_easy_strerror(result));
}

}  // namespace

struct CurlTransport::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io, CurlTransportOptions opts)
      : strand(asio::make_strand(io)), timer(strand), options(std::move(opts)) {
    multi = curl_multi_init();
    if (!multi) throw std::runtime_error("curl_multi_init failed");
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &Impl::on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &Impl::on_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, options.max_idle_connections);
  }

  ~Impl() {
    for (auto& [easy, call] : calls) curl_multi_remove_handle(multi, easy);
    calls.clear();
    curl_multi_cleanup(multi);  // closes cached connections through on_close
    for (auto& [fd, socket] : sockets) forget(*socket);
    timer.cancel();
  }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void start(HttpRequest request, HttpCallback done);
  std::unique_ptr<Call> prepare(HttpRequest& request, HttpCallback& done);
  void watch(const std::shared_ptr<Socket>& socket);
  void wait(const std::shared_ptr<Socket>& socket, asio::posix::stream_descriptor::wait_type type);
  void on_ready(Socket& socket, int direction, const boost::system::error_code& ec);
  void action(curl_socket_t fd, int events);
  void finish_done();
  void arm(std::chrono::steady_clock::time_point at);

  static void forget(Socket& socket) {
    socket.gone = true;
    boost::system::error_code ignored;
    socket.descriptor.cancel(ignored);
    socket.descriptor.release();  // curl owns the fd: never close it here
  }

  static int on_socket(CURL*, curl_socket_t fd, int what, void* user, void*);
  static int on_timer(CURLM*, long timeout_ms, void* user);
  static int on_close(void* user, curl_socket_t fd);

  Strand strand;
  asio::steady_timer timer;
  std::optional<std::chrono::steady_clock::time_point> deadline;  // curl's, when it wants one
  std::optional<std::chrono::steady_clock::time_point> armed;     // the timer's, while it waits
  bool timeout_posted = false;                                    // an action for "now" is queued
  CurlTransportOptions options;
  CURLM* multi = nullptr;
  std::unordered_map<curl_socket_t, std::shared_ptr<Socket>> sockets;
  std::unordered_map<CURL*, std::unique_ptr<Call>> calls;
};

// Every change curl reports gets a fresh descriptor and epoll registration. curl names
// sockets by number, and a number can come back for a new socket after curl closed the old
// one without our close callback (the threaded resolver's socketpair): a descriptor kept
// across that would wait on a registration the kernel already dropped.
int CurlTransport::Impl::on_socket(CURL*, curl_socket_t fd, int what, void* user, void*) {
  auto* self = static_cast<Impl*>(user);
  if (auto it = self->sockets.find(fd); it != self->sockets.end()) {
    forget(*it->second);
    self->sockets.erase(it);
  }
  if (what == CURL_POLL_REMOVE) return 0;
  auto socket = std::make_shared<Socket>(self->strand);
  boost::system::error_code ec;
  socket->descriptor.assign(fd, ec);
  if (ec) return -1;  // curl fails the transfer
  socket->wanted = what;
  self->sockets.emplace(fd, socket);
  self->watch(socket);
  return 0;
}

// curl moves its timer at nearly every step of every transfer, and re-arming an Asio
// timer each time costs a timerfd_settime system call: the single biggest cost of a
// transfer here. So "now" (0 ms) skips the timer and posts the action instead, and a later
// deadline than the armed one is only recorded: the timer, when it fires early, waits again
// for the recorded one. An earlier deadline re-arms; "none" (-1) cancels.
int CurlTransport::Impl::on_timer(CURLM*, long timeout_ms, void* user) {
  auto* self = static_cast<Impl*>(user);
  if (timeout_ms < 0) {
    self->deadline.reset();
    self->armed.reset();
    self->timer.cancel();
    return 0;
  }
  if (timeout_ms == 0) {
    self->deadline.reset();
    if (!self->timeout_posted) {
      self->timeout_posted = true;
      asio::post(self->strand, [weak = self->weak_from_this()] {
        if (auto impl = weak.lock()) {
          impl->timeout_posted = false;
          impl->action(CURL_SOCKET_TIMEOUT, 0);
        }
      });
    }
    return 0;
  }
  const auto at = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  self->deadline = at;
  if (!self->armed || at < *self->armed) self->arm(at);
  return 0;
}

void CurlTransport::Impl::arm(std::chrono::steady_clock::time_point at) {
  armed = at;
  timer.expires_at(at);
  timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (ec) return;  // re-armed or cancelled: a newer wait, if any, takes over
    auto impl = weak.lock();
    if (!impl) return;
    impl->armed.reset();
    if (!impl->deadline) return;
    if (std::chrono::steady_clock::now() < *impl->deadline) return impl->arm(*impl->deadline);
    impl->deadline.reset();
    impl->action(CURL_SOCKET_TIMEOUT, 0);
  });
}

int CurlTransport::Impl::on_close(void* user, curl_socket_t fd) {
  auto* self = static_cast<Impl*>(user);
  if (auto it = self->sockets.find(fd); it != self->sockets.end()) {
    forget(*it->second);
    self->sockets.erase(it);
  }
  return ::close(fd);
}

void CurlTransport::Impl::watch(const std::shared_ptr<Socket>& socket) {
  if ((socket->wanted & CURL_POLL_IN) && !socket->reading) wait(socket, asio::posix::stream_descriptor::wait_read);
  if ((socket->wanted & CURL_POLL_OUT) && !socket->writing) wait(socket, asio::posix::stream_descriptor::wait_write);
}

void CurlTransport::Impl::wait(const std::shared_ptr<Socket>& socket, asio::posix::stream_descriptor::wait_type type) {
  const bool read = type == asio::posix::stream_descriptor::wait_read;
  (read ? socket->reading : socket->writing) = true;
  socket->descriptor.async_wait(type, [weak = weak_from_this(), socket, read](const boost::system::error_code& ec) {
    (read ? socket->reading : socket->writing) = false;
    if (socket->gone || ec == asio::error::operation_aborted) return;
    if (auto impl = weak.lock()) impl->on_ready(*socket, read ? CURL_CSELECT_IN : CURL_CSELECT_OUT, ec);
  });
}

void CurlTransport::Impl::on_ready(Socket& socket, int direction, const boost::system::error_code& ec) {
  const int wanted = direction == CURL_CSELECT_IN ? CURL_POLL_IN : CURL_POLL_OUT;
  if (!(socket.wanted & wanted)) return;  // curl changed its mind while we waited
  const curl_socket_t fd = socket.descriptor.native_handle();
  action(fd, direction | (ec ? CURL_CSELECT_ERR : 0));
  // Still watched and still wanted: wait again (curl may not have read everything).
  if (auto it = sockets.find(fd); it != sockets.end()) watch(it->second);
}

void CurlTransport::Impl::action(curl_socket_t fd, int events) {
  int running = 0;
  curl_multi_socket_action(multi, fd, events, &running);
  finish_done();
}

void CurlTransport::Impl::finish_done() {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL* easy = msg->easy_handle;
    const CURLcode code = msg->data.result;
    auto it = calls.find(easy);
    if (it == calls.end()) continue;
    std::unique_ptr<Call> call = std::move(it->second);
    calls.erase(it);
    curl_multi_remove_handle(multi, easy);
    HttpResult result = std::unexpected(from_curl(code, *call));
    if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && call->stopped)) {
      long status = 0;
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
      call->response.status = static_cast<int>(status);
      result = std::move(call->response);
    }
    HttpCallback done = std::move(call->done);
    call.reset();
    done(std::move(result));
  }
}

std::unique_ptr<Call> CurlTransport::Impl::prepare(HttpRequest& request, HttpCallback& done) {
  auto call = std::make_unique<Call>();
  call->easy = curl_easy_init();
  call->done = std::move(done);
  call->max_bytes = request.max_response_bytes != 0 ? request.max_response_bytes : options.max_response_bytes;
  call->body = std::move(request.body);
  call->stream = std::move(request.on_body);
  if (!call->easy) return call;
  CURL* e = call->easy;
  curl_easy_setopt(e, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, call->error);
  curl_easy_setopt(e, CURLOPT_PRIVATE, call.get());
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(call->max_bytes));
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, call.get());
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, call.get());
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, &Impl::on_close);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, this);
  if (request.method == "GET") {
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  } else {
    if (request.method != "POST") curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(call->body.size()));
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, call->body.c_str());
  }
  // "Expect:" stops curl from waiting for 100 Continue before sending larger bodies.
  call->header_list = curl_slist_append(call->header_list, "Expect:");
  for (const auto& [name, value] : request.headers.fields())
    call->header_list = curl_slist_append(call->header_list, (name + (value.empty() ? ";" : ": " + value)).c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, call->header_list);
  return call;
}

void CurlTransport::Impl::start(HttpRequest request, HttpCallback done) {
  std::unique_ptr<Call> call = prepare(request, done);
  CURL* easy = call->easy;
  if (!easy || curl_multi_add_handle(multi, easy) != CURLM_OK) {
    HttpCallback callback = std::move(call->done);
    callback(std::unexpected(TransportError{TransportErrorKind::other, "curl could not start the request"}));
    return;
  }
  calls.emplace(easy, std::move(call));
}

CurlTransport::CurlTransport(boost::asio::io_context& io, CurlTransportOptions options) {
  global_init();
  m_impl = std::make_shared<Impl>(io, std::move(options));
}

CurlTransport::~CurlTransport() = default;

void CurlTransport::send(HttpRequest request, HttpCallback done) {
  asio::post(m_impl->strand,
             [weak = std::weak_ptr<Impl>(m_impl), request = std::move(request), done = std::move(done)]() mutable {
               if (auto impl = weak.lock()) impl->start(std::move(request), std::move(done));
             });
}

}  // namespace dispatchd::net
