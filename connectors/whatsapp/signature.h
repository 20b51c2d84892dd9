#pragma once
// Webhook signatures: Meta signs every POST to the webhook with the app secret and sends
// `X-Hub-Signature-256: sha256=<64 hex digits>`, the HMAC-SHA256 of the request body.
//
// The HMAC covers the RAW body bytes exactly as received. Meta serializes the payload with
// non-ASCII characters escaped (`\u00e9`), so a body that is parsed and written again no
// longer matches: verify before parsing, over the bytes off the wire. Pure functions; no
// state, safe from any thread.

#include <expected>
#include <string>
#include <string_view>

namespace dispatchd::whatsapp {

enum class SignatureError {
  no_secret,  // the configured app secret is empty: nothing can verify (a configuration bug)
  missing,    // no header, or an empty one
  malformed,  // not "sha256=" followed by exactly 64 hex digits
  mismatch,   // well formed, but not the HMAC of this body with this secret
};

// One phrase ("missing X-Hub-Signature-256 header", …) for logs and the 401 body. Never contains
// the secret or the expected digest.
const char* to_string(SignatureError error);

// Checks `header_value` (the X-Hub-Signature-256 value; surrounding whitespace allowed,
// hex digits in either case) against HMAC-SHA256(app_secret, raw_body). The digest is
// compared in constant time (text::constant_time_equal). The daemon answers 401 to every error.
[[nodiscard]] std::expected<void, SignatureError> verify_signature(std::string_view raw_body,
                                                                   std::string_view header_value,
                                                                   std::string_view app_secret);

// The header value Meta would send for `raw_body`: "sha256=" + lowercase hex. For tests,
// fakes and the demo, which sign the bytes they then send unchanged.
std::string sign_body(std::string_view raw_body, std::string_view app_secret);

}  // namespace dispatchd::whatsapp
