#pragma once
// Strict JSON parsing of untrusted text. An internal header of the core modules: it
// exposes RapidJSON, so public module headers must not include it.
//
// Strict means: RapidJSON's iterative parser (no recursion, whatever the nesting), valid
// UTF-8 with no encoded surrogates, no NaN/Infinity, numbers that fit a double, a nesting
// depth limit, and duplicate object keys rejected (RapidJSON keeps both by default).
//
// Every JSON text from outside the process is read strictly, by one of two readers:
//  - parse_strict (here), a DOM walked with json_access.h: webhooks (connectors/whatsapp,
//    size and depth from WebhookLimits), Graph API answers (64 KiB, depth 32), provider
//    answers (llm/, providers' max_response_bytes, depth 64), staff API bodies (the
//    listener's body limit, the validator's depth + 1), and the operator's files: the
//    catalog (1 MiB, depth 16) and the configuration (1 MiB, depth 32, comments allowed);
//  - json_reader.h's read_object, for the model's replies in the validator: the hot path
//    (bench/validator_bench), one pass and no DOM. It accepts exactly what parse_strict
//    accepts with trailing commas allowed (the same duplicate-key, depth and surrogate
//    rules, never recursing; tests/common/json_reader_test.cpp holds the two to the same
//    verdicts), and parse_strict says why when it refuses. The validator's Limits bound
//    the reply's size and depth.
// Text dispatchd wrote itself (a verdict's output) is read with parse_strict too.

#include <cstddef>
#include <expected>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace dispatchd::json {

struct ParseLimits {
  std::size_t max_depth = 32;  // objects and arrays nested inside each other
  // The caller checks UTF-8 itself: already, over the whole text (the validator checks the
  // reply once), or in the strings where it matters (the configuration checks the text it
  // sends and names the value that is not UTF-8). Otherwise parse_strict checks the whole
  // text first.
  bool input_utf8_checked = false;
  // `// line` and `/* block */` comments count as whitespace: for the configuration file,
  // which people annotate. Never for text from outside the process.
  bool allow_comments = false;
};

// The limits for JSON that a strict reader already accepted and dispatchd wrote back (a
// verdict's output): its size, depth and encoding were checked when it was first read, and
// the parser never recurses, so no second depth limit can refuse it.
inline constexpr ParseLimits k_checked_json_limits{.max_depth = static_cast<std::size_t>(-1),
                                                   .input_utf8_checked = true};

struct ParseError {
  std::string code;     // syntax, truncated, duplicate_key, too_deep, invalid_string,
                        // number_out_of_range, empty
  std::string message;  // one phrase without the offset; quotes at most a short excerpt
  std::size_t offset;   // byte offset in the parsed text
};

// Storage for one parse: a document built into it needs no heap allocation while it fits
// (8 KiB; larger documents spill to the heap). REQUIRES: outlives the Parsed it is used for.
class ParseArena {
 public:
  ParseArena() = default;
  ParseArena(const ParseArena&) = delete;
  ParseArena& operator=(const ParseArena&) = delete;
  rapidjson::MemoryPoolAllocator<>* allocator() { return &m_allocator; }

 private:
  alignas(8) char m_buffer[8192];
  rapidjson::MemoryPoolAllocator<> m_allocator{m_buffer, sizeof m_buffer};
};

struct Parsed {
  rapidjson::Document document;
  bool used_trailing_commas = false;  // only when allow_trailing_commas
};

// Parses `text` as exactly one JSON value. When `allow_trailing_commas` is set and the
// strict parse fails, a second parse accepting trailing commas is tried and reported in
// `used_trailing_commas`; every other error is returned as is.
[[nodiscard]] std::expected<Parsed, ParseError> parse_strict(std::string_view text, const ParseLimits& limits,
                                                             bool allow_trailing_commas = false,
                                                             ParseArena* arena = nullptr);

// Where the JSON string whose opening quote is at `open` ends: the index of its closing
// quote, or npos when it is not closed before `end`. Uses memchr for the quotes and counts
// the backslashes before each, so long strings cost little more than a memory scan.
std::size_t string_end(std::string_view text, std::size_t open, std::size_t end);

// `valid_json` without the whitespace between tokens; strings are copied byte for byte, so
// escapes stay as written. REQUIRES: `valid_json` parsed (no trailing commas). One pass,
// no parsing: the cheap way to store a validated reply on one line.
std::string minify(std::string_view valid_json);

// Compact serialization of `value` (RapidJSON's writer; keys in document order).
std::string to_string(const rapidjson::Value& value);

// The name of `value`'s JSON type for messages: "string", "integer", "number", "boolean",
// "null", "object" or "array".
const char* type_name(const rapidjson::Value& value);

}  // namespace dispatchd::json
