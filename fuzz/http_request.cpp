// Fuzz target: the listener's request path, raw bytes off the wire in: the same Beast
// parser with the same limits (daemon/http_request.h, shared with the session), then what
// the daemon does with a Request before any handler runs that is pure: header lookups and
// the query string parsed as the WhatsApp handshake parses it.
// Invariants: an accepted request keeps the limits (body size), the path has no query,
// header names are lower-case; a refusal maps to the listener's 400/413/431 or to waiting.

#include <algorithm>
#include <cctype>

#include "connectors/whatsapp/handshake.h"
#include "daemon/http_request.h"
#include "fuzz/fuzz.h"

namespace {

using namespace dispatchd;

constexpr const char* k_target = "http_request";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The listener's defaults, with a smaller body limit so that 413 is within the fuzzer's reach.
  const daemon::HttpLimits limits{.max_header_bytes = 8 * 1024, .max_body_bytes = 16 * 1024};
  const auto request = daemon::parse_request(fuzz::text(data, size), limits);
  if (!request) {
    const int status = request.error().http_status();
    fuzz::require(status == 0 || status == 400 || status == 413 || status == 431, k_target, "an unexpected status");
    return 0;
  }
  fuzz::require(request->body.size() <= limits.max_body_bytes, k_target, "a body over the limit accepted");
  fuzz::require(request->path.find('?') == std::string::npos, k_target, "a query left in the path");
  for (const auto& [name, value] : request->headers) {
    fuzz::require(std::none_of(name.begin(), name.end(), [](unsigned char c) { return std::isupper(c) != 0; }),
                  k_target, "a header name not lower-cased");
    fuzz::require(request->header(name).has_value(), k_target, "a header not found by its name");
  }
  if (const auto query = whatsapp::parse_query(request->query)) {
    for (const auto& [name, value] : *query)
      fuzz::require(name.find('\0') == std::string::npos && value.find('\0') == std::string::npos, k_target,
                    "a decoded NUL in a query parameter");
  }
  return 0;
}
