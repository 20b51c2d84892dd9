#pragma once
// How an inbound message's raw payload (the webhook body, the RFC 822 bytes of a mail) is
// kept in inbox.raw_payload, a TEXT column on both engines (migration 0016).
//
// PostgreSQL's TEXT holds valid UTF-8 only: a mail whose raw bytes are ISO-8859-1 (or a
// broken one, kept for staff) would be refused, and with it the whole Gmail poll, again at
// every poll. So a payload that is valid UTF-8 is stored as it is, and any other is stored
// as its base64 (RFC 4648, padded) with inbox.raw_encoding = 'base64'. Both engines follow
// the same rule, so a row reads the same after `dispatchctl migrate-store`. Pure functions.

#include <optional>
#include <string>
#include <string_view>

namespace dispatchd::store {

struct StoredPayload {
  std::string text;                     // what goes in raw_payload
  std::optional<std::string> encoding;  // raw_encoding: nullopt (as is) or "base64"
};

// `bytes` as stored: as is when valid UTF-8, else base64 with encoding "base64".
StoredPayload store_payload(std::string_view bytes);

// The bytes of a stored payload; nullopt when `encoding` is unknown or `text` is not the
// base64 it claims to be (a row edited by hand).
std::optional<std::string> payload_bytes(std::string_view text, const std::optional<std::string>& encoding);

}  // namespace dispatchd::store
