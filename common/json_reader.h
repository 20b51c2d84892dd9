#pragma once
// A strict, single-pass reader for one JSON object: the validator's fast path.
//
// read_object() accepts exactly the objects that parse_strict() accepts with trailing
// commas allowed (same depth rule, same duplicate-key rule, same surrogate rule, numbers
// as RapidJSON reads them), but builds no DOM: the top-level members are kept as views
// into the text, strings without escapes are not copied, and a typical reply needs no
// heap allocation besides the compact copy of itself. It does not say why it refuses a
// text: callers ask parse_strict(), whose error codes and messages stay the reference.
// tests/common/json_reader_test.cpp holds the two to the same verdicts.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/small_vector.h"

namespace dispatchd::json {

enum class Type : std::uint8_t { null, boolean, number, string, object, array };

// A number as RapidJSON reads it: an integer when written without fraction or exponent
// and within 64 bits, else a double.
struct Number {
  enum class Kind : std::uint8_t { int64, uint64, real };
  Kind kind = Kind::int64;
  std::int64_t i = 0;   // Kind::int64
  std::uint64_t u = 0;  // Kind::uint64
  double d = 0;         // Kind::real

  bool is_integer() const { return kind != Kind::real; }
  double as_double() const;  // like rapidjson::Value::GetDouble
};

// One value of the object. Nested arrays and objects are checked but not broken down:
// `raw` is all they keep.
struct Value {
  Type type = Type::null;
  bool boolean = false;   // Type::boolean
  Number number;          // Type::number
  std::string_view raw;   // the value exactly as written in the text
  std::string_view text;  // Type::string: the decoded content (escapes resolved)

  bool is_null() const { return type == Type::null; }
  bool is_string() const { return type == Type::string; }
};

struct Member {
  std::string_view key;  // decoded
  Value value;
};

// The result of read_object(). Views point into the text read and into this object, so
// it is neither copyable nor movable, and the text must outlive it.
class Object {
 public:
  Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  std::span<const Member> members() const { return {m_members.begin(), m_members.size()}; }
  std::size_t size() const { return m_members.size(); }
  // The member named `key`, or nullptr (keys are unique). Inline: the checks call it for
  // every catalog field.
  const Value* find(std::string_view key) const {
    for (const Member& member : m_members) {
      if (member.key == key) return &member.value;
    }
    return nullptr;
  }
  // Whether a trailing comma was accepted (`{"a":1,}`): strict JSON would refuse it.
  bool used_trailing_commas() const { return m_trailing_commas; }
  // The text without the whitespace between tokens, strings byte for byte: what minify()
  // returns for the same text. Meant to be moved out (to a verdict's output).
  std::string& compact() { return m_compact; }

 private:
  friend class Reader;
  friend std::optional<std::size_t> read_object_prefix(std::string_view text, std::size_t max_depth, Object& out);
  SmallVector<Member, 16> m_members;
  // Decoded strings that had escapes; never larger than the text, so sized once per read.
  char m_inline_decoded[1024];
  std::unique_ptr<char[]> m_heap_decoded;
  std::string m_compact;
  bool m_trailing_commas = false;
};

// Reads `text` (REQUIRES: valid UTF-8, as utf8::first_invalid checks) as exactly one JSON
// object, nesting at most `max_depth` levels (the object itself is level 1), into `out`.
// Returns false when parse_strict(text, {max_depth}, true) would refuse it or when the
// value is not an object; `out` is then unspecified.
bool read_object(std::string_view text, std::size_t max_depth, Object& out);

// Like read_object(), for the object at the start of `text` (after whitespace), ignoring
// whatever follows it: returns the offset just past its closing brace, or nullopt. Lets a
// scanner that looks for objects in longer text check one with the strict reader.
std::optional<std::size_t> read_object_prefix(std::string_view text, std::size_t max_depth, Object& out);

// The name of `value`'s JSON type, as type_name(const rapidjson::Value&) gives it.
const char* type_name(const Value& value);

// Compact serialization of `value`, as to_string(const rapidjson::Value&) gives it.
std::string to_string(const Value& value);

}  // namespace dispatchd::json
