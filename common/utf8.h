#pragma once
// UTF-8 helpers for untrusted text. Pure functions, no allocation beyond the result.

#include <cstddef>
#include <optional>
#include <string_view>

namespace dispatchd::utf8 {

// Returns the byte offset of the first invalid sequence, or nullopt when `text` is valid
// UTF-8. Invalid means: bad lead or continuation bytes, truncated sequences, overlong
// encodings, code points above U+10FFFF, and encoded surrogates (U+D800..U+DFFF), which
// is how a lone surrogate escape decodes.
std::optional<std::size_t> first_invalid(std::string_view text);

inline bool is_valid(std::string_view text) { return !first_invalid(text).has_value(); }

// True when `text` holds the UTF-8 bytes of a surrogate (ED A0..BF ..): what a decoder
// that accepts lone \u escapes produces. Cheaper than first_invalid on text whose raw
// bytes were already checked.
bool has_encoded_surrogate(std::string_view text);

// Number of code points in valid UTF-8 `text` (counts lead bytes).
std::size_t code_points(std::string_view text);

// The longest prefix of `text` with at most `max_points` code points that does not split
// a multi-byte sequence.
std::string_view prefix(std::string_view text, std::size_t max_points);

}  // namespace dispatchd::utf8
