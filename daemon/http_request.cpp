#include "daemon/http_request.h"

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <cctype>
#include <cstdint>

#include "daemon/internal/http_parser.h"

namespace dispatchd::daemon {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

RequestError request_error(const beast::error_code& ec) {
  RequestErrorKind kind = RequestErrorKind::bad_request;
  if (ec == http::error::need_more || ec == http::error::partial_message) kind = RequestErrorKind::incomplete;
  if (ec == http::error::header_limit) kind = RequestErrorKind::header_too_large;
  if (ec == http::error::body_limit) kind = RequestErrorKind::body_too_large;
  return RequestError{kind, ec.message()};
}

}  // namespace

std::optional<std::string_view> Request::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return std::nullopt;
}

int RequestError::http_status() const {
  switch (kind) {
    case RequestErrorKind::incomplete: return 0;
    case RequestErrorKind::header_too_large: return 431;
    case RequestErrorKind::body_too_large: return 413;
    case RequestErrorKind::bad_request: return 400;
  }
  return 400;
}

void configure(RequestParser& parser, const HttpLimits& limits) {
  parser.header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(limits.max_header_bytes, UINT32_MAX)));
  parser.body_limit(limits.max_body_bytes);
}

Request to_request(const RequestParser::value_type& message) {
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
  return request;
}

std::expected<Request, RequestError> parse_request(std::string_view bytes, const HttpLimits& limits) {
  try {
    RequestParser parser;
    configure(parser, limits);
    // Fed the way http::async_read feeds it: whatever is unread, until the message is done.
    while (!parser.is_done()) {
      beast::error_code ec;
      const std::size_t used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
      bytes.remove_prefix(used);
      if (ec) return std::unexpected(request_error(ec));
      if (used == 0 && !parser.is_done()) return std::unexpected(request_error(http::error::need_more));
    }
    return to_request(parser.get());
  } catch (const std::exception& e) {
    // Beast reports through error codes; only an allocation failure lands here.
    return std::unexpected(RequestError{RequestErrorKind::bad_request, e.what()});
  }
}

}  // namespace dispatchd::daemon
