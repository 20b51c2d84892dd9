#pragma once
// Small text helpers for messages about untrusted values.

#include <cstddef>
#include <string>
#include <string_view>

namespace dispatchd::text {

// `value` as a double-quoted, JSON-escaped string of at most `max_points` code points of
// the original, with "…" appended when cut. Used wherever a message quotes what the model
// or a sender wrote: the quote stays short and can never break the surrounding text.
std::string quote(std::string_view value, std::size_t max_points = 40);

// Escapes one reference token of a JSON pointer (RFC 6901: "~" -> "~0", "/" -> "~1").
std::string pointer_token(std::string_view token);

// Levenshtein distance, capped: returns `cap + 1` as soon as the distance exceeds `cap`.
// Used for "did you mean" hints on short enum values.
std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t cap);

}  // namespace dispatchd::text
