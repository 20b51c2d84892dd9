#pragma once
// One HTTP request read from raw bytes exactly as the listener reads it (http_server.h):
// the same Beast parser with the same header and body limits, turned into the same
// Request. No socket, no clock: for tests and the fuzzer, which feed it hostile bytes.
//
// Errors mirror the listener's answers: a header over the limit is 431, a body over the
// limit 413, anything the parser refuses 400; bytes that end before the request does are
// `incomplete` (the listener would wait for more, then drop the connection). Bytes after
// the first complete request (a pipelined one) are left unread. Never throws.

#include <expected>
#include <string>
#include <string_view>

#include "daemon/http_server.h"

namespace dispatchd::daemon {

enum class RequestErrorKind { incomplete, header_too_large, body_too_large, bad_request };

struct RequestError {
  RequestErrorKind kind = RequestErrorKind::bad_request;
  std::string message;  // the parser's one-line reason

  // The listener's status for it; 0 for `incomplete`, which is not answered.
  int http_status() const;
};

[[nodiscard]] std::expected<Request, RequestError> parse_request(std::string_view bytes, const HttpLimits& limits = {});

}  // namespace dispatchd::daemon
