#pragma once
// Meta's webhook verification handshake: when the webhook URL is configured, Meta calls
//   GET /webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=<token>&hub.challenge=<n>
// and expects the challenge echoed back (200, text/plain) only when the token is the one
// configured; anything else is refused with 403.
//
// Also a small query-string parser, bounded and with strict percent-decoding. Pure
// functions; safe from any thread.

#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dispatchd::whatsapp {

struct QueryLimits {
  std::size_t max_length = 4096;  // bytes of the raw query string
  std::size_t max_params = 32;
};

// The decoded (name, value) pairs in their order; a name may repeat.
using QueryParams = std::vector<std::pair<std::string, std::string>>;

// Parses the part of a request target after '?' (a leading '?' is skipped; a '#fragment'
// is not expected and is part of the last value). `+` decodes to a space, `%XX` to its
// byte. Errors (one phrase): longer than max_length, more than max_params pairs, a '%'
// not followed by two hex digits, or a decoded NUL byte. Empty pairs ("a=1&&b=2") are
// skipped; a pair without '=' has an empty value.
[[nodiscard]] std::expected<QueryParams, std::string> parse_query(std::string_view query,
                                                                  const QueryLimits& limits = {});

// The value of `name` when it appears exactly once; nullopt when absent or repeated (a
// repeated hub.* parameter is ambiguous and never guessed).
std::optional<std::string> single_value(const QueryParams& params, std::string_view name);

struct HandshakeRefusal {
  int status = 403;    // 400 when the query string itself could not be parsed
  std::string reason;  // for the log; not secret (never quotes the expected token)
};

// Decides the answer to a verification GET. Accepts only when hub.mode is "subscribe",
// hub.verify_token equals `verify_token` (constant-time comparison; an empty configured
// token never matches) and hub.challenge is 1..256 printable ASCII characters without
// spaces (it is echoed into the response body). Returns the challenge to send back.
[[nodiscard]] std::expected<std::string, HandshakeRefusal> answer_handshake(const QueryParams& params,
                                                                            std::string_view verify_token);

// parse_query + answer_handshake, for the listener: `query` is the raw target after '?'.
[[nodiscard]] std::expected<std::string, HandshakeRefusal> answer_handshake(std::string_view query,
                                                                            std::string_view verify_token);

}  // namespace dispatchd::whatsapp
