#pragma once
// The outbound HTTP transport shared by llm/ and connectors/: a request, a response, the
// ways an exchange can fail, and the asynchronous Transport interface. No curl or Asio
// types here; CurlTransport (curl_transport.h) is the real implementation.

#include <chrono>
#include <cstddef>
#include <expected>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dispatchd::net {

// Header fields in order. Names compare ASCII case-insensitively (HTTP field names are
// case-insensitive); values are kept as received, without surrounding whitespace.
class Headers {
 public:
  using Field = std::pair<std::string, std::string>;

  Headers() = default;
  Headers(std::initializer_list<Field> fields) : m_fields(fields) {}

  void add(std::string name, std::string value) { m_fields.emplace_back(std::move(name), std::move(value)); }
  // The first value of `name`, or nullopt when absent. The view lives as long as *this.
  std::optional<std::string_view> get(std::string_view name) const;
  const std::vector<Field>& fields() const { return m_fields; }
  void clear() { m_fields.clear(); }

 private:
  std::vector<Field> m_fields;
};

// ASCII case-insensitive equality, for header names.
bool iequals(std::string_view a, std::string_view b);

struct HttpResponse {
  int status = 0;  // any status is a response, 4xx and 5xx included
  Headers headers;
  std::string body;
};

// A streamed body's receiver: the answer's status and headers (`head`, its body empty) and
// the next chunk. Returns false to end the exchange there.
using BodyChunk = std::function<bool(const HttpResponse& head, std::string_view chunk)>;

struct HttpRequest {
  std::string method = "GET";  // "POST" sends `body`
  std::string url;
  Headers headers;
  std::string body;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds timeout{60'000};  // the whole exchange, connect included
  // The largest body this exchange takes (a download's cap); 0: the transport's own cap.
  std::size_t max_response_bytes = 0;
  // For answers that may stay open (an event stream): when set, the body is not collected
  // but handed to `on_body` as it arrives, in order, where `done` runs and before it; `done`
  // then gets the status and headers with an empty body. When `on_body` returns false it is
  // never called again and the exchange ends (its connection closed) when the transport next
  // hears from it: at once for a transport on the caller's loop, at the stream's next bytes
  // for one on a thread of its own. `done` then gets the status and headers as a response:
  // stopping is not an error. The size cap counts the bytes handed over; `timeout` still
  // bounds the whole exchange. REQUIRES: `on_body` does not destroy the transport.
  BodyChunk on_body;
};

enum class TransportErrorKind {
  connect_failed,  // refused, unreachable, name not resolved, TLS handshake failed
  timed_out,       // connect or total timeout
  too_large,       // the response body passed the transport's size cap
  other,           // connection reset, malformed HTTP, shut down, ...
};

std::string_view to_string(TransportErrorKind kind);

struct TransportError {
  TransportErrorKind kind = TransportErrorKind::other;
  std::string message;  // one line for logs; never contains request headers (keys)
};

using HttpResult = std::expected<HttpResponse, TransportError>;
using HttpCallback = std::move_only_function<void(HttpResult)>;

// Sends requests asynchronously. Implementations call `done` exactly once per send, on
// their event loop, and never from inside send() itself, so a caller may hold locks or
// re-enter send() from the callback.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual void send(HttpRequest request, HttpCallback done) = 0;
};

}  // namespace dispatchd::net
