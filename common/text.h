#pragma once
// Small text helpers: quoting untrusted values in messages, JSON pointer tokens, "did you
// mean" distances, and comparing secrets.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace dispatchd::text {

// `value` as a double-quoted, JSON-escaped string of at most `max_points` code points of
// the original, with "…" appended when cut. Used wherever a message quotes what the model
// or a sender wrote: the quote stays short and can never break the surrounding text.
std::string quote(std::string_view value, std::size_t max_points = 40);

// Escapes one reference token of a JSON pointer (RFC 6901: "~" -> "~0", "/" -> "~1").
std::string pointer_token(std::string_view token);

// RFC 3986 percent-encoding of every byte but the unreserved characters (A-Z a-z 0-9 - . _ ~),
// upper-case hex: a URL query value or path segment, an application/x-www-form-urlencoded value.
std::string percent_encode(std::string_view value);

// The value of an application/x-www-form-urlencoded query (what a browser's URLSearchParams
// writes): "+" is a space and %XX a byte. nullopt for a "%" not followed by two hex digits.
// The bytes are not checked as UTF-8 here.
std::optional<std::string> form_decode(std::string_view value);

// Levenshtein distance, capped: returns `cap + 1` as soon as the distance exceeds `cap`.
// Used for "did you mean" hints on short enum values.
std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t cap);

// Whether `a` and `b` hold the same bytes, in a time that depends on their length only: every
// byte is compared, whatever the first difference. For secrets a request presents (a bearer
// token, a webhook verify token, an HMAC digest), so that the time to refuse a guess says
// nothing about how much of it was right. The length itself is not secret here.
bool constant_time_equal(std::string_view a, std::string_view b);

// Two lower-case hex digits per byte (digests, random secrets).
std::string hex(std::span<const unsigned char> bytes);

// A hex digit's value, either case; -1 for any other character.
constexpr int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace dispatchd::text
