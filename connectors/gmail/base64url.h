#pragma once
// Base64url (RFC 4648 §5), the encoding of Gmail's `raw` fields: messages.get?format=raw
// answers the message's bytes in it and messages.send takes them in it. Gmail writes it
// with or without '=' padding; both are read.

#include <optional>
#include <string>
#include <string_view>

namespace dispatchd::gmail {

// Unpadded base64url of `bytes`.
std::string base64url_encode(std::string_view bytes);

// The bytes of `text`, or nullopt when it is not base64url: a character outside the
// alphabet (the standard alphabet's '+' and '/' included), a length that cannot be one
// (remainder 1), padding anywhere but at the end, or non-zero bits left over in the last
// character. Whitespace is not allowed.
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace dispatchd::gmail
