#pragma once
// Strict JSON parsing of untrusted text. An internal header of the core modules: it
// exposes RapidJSON, so public module headers must not include it.
//
// Strict means: RapidJSON's iterative parser (no recursion, whatever the nesting), valid
// UTF-8 with no encoded surrogates, no NaN/Infinity, numbers that fit a double, a nesting
// depth limit, and duplicate object keys rejected (RapidJSON keeps both by default).

#include <cstddef>
#include <expected>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace dispatchd::json {

struct ParseLimits {
  std::size_t max_depth = 32;  // objects and arrays nested inside each other
};

struct ParseError {
  std::string code;     // syntax, truncated, duplicate_key, too_deep, invalid_string,
                        // number_out_of_range, empty
  std::string message;  // one phrase without the offset; quotes at most a short excerpt
  std::size_t offset;   // byte offset in the parsed text
};

struct Parsed {
  rapidjson::Document document;
  bool used_trailing_commas = false;  // only when allow_trailing_commas
};

// Parses `text` as exactly one JSON value. When `allow_trailing_commas` is set and the
// strict parse fails, a second parse accepting trailing commas is tried and reported in
// `used_trailing_commas`; every other error is returned as is.
std::expected<Parsed, ParseError> parse_strict(std::string_view text, const ParseLimits& limits,
                                               bool allow_trailing_commas = false);

// Compact serialization of `value` (RapidJSON's writer; keys in document order).
std::string to_string(const rapidjson::Value& value);

// The name of `value`'s JSON type for messages: "string", "integer", "number", "boolean",
// "null", "object" or "array".
const char* type_name(const rapidjson::Value& value);

}  // namespace dispatchd::json
