#pragma once
#ifndef DISPATCHD_INTERNAL_DAEMON
#error "daemon/internal/ is private to daemon/: include the module's public headers instead"
#endif
// Internal: the listener's request parser, set up in one place for the session (which
// reads from a socket) and parse_request (which reads from bytes), so that what the tests
// and the fuzzer exercise is what serves requests.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/beast/http.hpp>

#include "daemon/http_server.h"

namespace dispatchd::daemon {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// The header and body limits of `limits` on a fresh parser.
void configure(RequestParser& parser, const HttpLimits& limits);

// The parsed message as our Request: the target split at the first '?', header names
// lower-cased, the body as received.
Request to_request(const RequestParser::value_type& message);

}  // namespace dispatchd::daemon
