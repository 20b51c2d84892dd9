#include "common/strict_json.h"

#include <cctype>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/text.h"
#include "common/utf8.h"

namespace dispatchd::json {
namespace {

// Forwards SAX events to the document being built while enforcing what RapidJSON does not:
// depth, unique keys, and no surrogates smuggled in through \u escapes.
class StrictHandler {
 public:
  StrictHandler(rapidjson::Document& target, const ParseLimits& limits)
      : m_target(target), m_limits(limits) {}

  bool Null() { return m_target.Null(); }
  bool Bool(bool b) { return m_target.Bool(b); }
  bool Int(int i) { return m_target.Int(i); }
  bool Uint(unsigned u) { return m_target.Uint(u); }
  bool Int64(std::int64_t i) { return m_target.Int64(i); }
  bool Uint64(std::uint64_t u) { return m_target.Uint64(u); }
  bool Double(double d) { return m_target.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return m_target.RawNumber(s, n, copy); }

  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    if (!check_text(std::string_view(s, n))) return false;
    return m_target.String(s, n, copy);
  }
  bool StartObject() {
    if (!enter()) return false;
    m_keys.emplace_back();
    return m_target.StartObject();
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    const std::string_view key(s, n);
    if (!check_text(key)) return false;
    if (!m_keys.back().emplace(key).second) {
      m_failure = {"duplicate_key", "duplicate key " + text::quote(key) + " in one object", 0};
      return false;
    }
    return m_target.Key(s, n, copy);
  }
  bool EndObject(rapidjson::SizeType members) {
    m_keys.pop_back();
    --m_depth;
    return m_target.EndObject(members);
  }
  bool StartArray() { return enter() && m_target.StartArray(); }
  bool EndArray(rapidjson::SizeType elements) {
    --m_depth;
    return m_target.EndArray(elements);
  }

  const ParseError& failure() const { return m_failure; }

 private:
  bool enter() {
    if (++m_depth > m_limits.max_depth) {
      m_failure = {"too_deep", "nesting deeper than " + std::to_string(m_limits.max_depth) + " levels", 0};
      return false;
    }
    return true;
  }
  bool check_text(std::string_view s) {
    if (utf8::is_valid(s)) return true;
    m_failure = {"invalid_string", "a string holds invalid UTF-8 or a lone surrogate escape", 0};
    return false;
  }

  rapidjson::Document& m_target;
  const ParseLimits& m_limits;
  std::size_t m_depth = 0;
  std::vector<std::unordered_set<std::string>> m_keys;  // one set per open object
  ParseError m_failure;
};

constexpr unsigned k_strict_flags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;

ParseError describe(rapidjson::ParseErrorCode code, std::size_t offset, std::string_view text) {
  using namespace rapidjson;
  if (offset >= text.size() && code != kParseErrorDocumentEmpty) {
    return {"truncated", "the JSON ends before it is complete", offset};
  }
  switch (code) {
    case kParseErrorDocumentEmpty: return {"empty", "no JSON value", offset};
    case kParseErrorNumberTooBig:
      return {"number_out_of_range", "a number is too large to represent", offset};
    case kParseErrorStringUnicodeSurrogateInvalid:
    case kParseErrorStringInvalidEncoding:
      return {"invalid_string", "a string holds invalid UTF-8 or a lone surrogate escape", offset};
    case kParseErrorObjectMissName:
      return {"syntax", "object keys must be double-quoted strings", offset};
    default: break;
  }
  std::string message = GetParseError_En(code);
  if (!message.empty() && message.back() == '.') message.pop_back();
  message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  return {"syntax", message + " (near " + text::quote(text.substr(offset), 16) + ")", offset};
}

template <unsigned Flags>
std::expected<rapidjson::Document, ParseError> parse_with(std::string_view text, const ParseLimits& limits) {
  rapidjson::MemoryStream bytes(text.data(), text.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> stream(bytes);
  rapidjson::Reader reader;
  ParseError handler_failure;
  auto generator = [&](rapidjson::Document& target) {
    StrictHandler handler(target, limits);
    const bool ok = !reader.Parse<Flags>(stream, handler).IsError();
    if (!ok) handler_failure = handler.failure();
    return ok;
  };
  rapidjson::Document document;
  document.Populate(generator);
  if (!reader.HasParseError()) return document;
  const std::size_t offset = reader.GetErrorOffset();
  if (reader.GetParseErrorCode() != rapidjson::kParseErrorTermination) {
    return std::unexpected(describe(reader.GetParseErrorCode(), offset, text));
  }
  handler_failure.offset = offset;
  return std::unexpected(handler_failure);
}

}  // namespace

std::expected<Parsed, ParseError> parse_strict(std::string_view text, const ParseLimits& limits,
                                               bool allow_trailing_commas) {
  auto strict = parse_with<k_strict_flags>(text, limits);
  if (strict) return Parsed{std::move(*strict), false};
  if (allow_trailing_commas && strict.error().code == "syntax") {
    auto lenient = parse_with<k_strict_flags | rapidjson::kParseTrailingCommasFlag>(text, limits);
    if (lenient) return Parsed{std::move(*lenient), true};
  }
  return std::unexpected(strict.error());
}

std::string to_string(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return {buffer.GetString(), buffer.GetSize()};
}

const char* type_name(const rapidjson::Value& value) {
  if (value.IsString()) return "string";
  if (value.IsBool()) return "boolean";
  if (value.IsNull()) return "null";
  if (value.IsObject()) return "object";
  if (value.IsArray()) return "array";
  if (value.IsInt64() || value.IsUint64()) return "integer";
  return "number";
}

}  // namespace dispatchd::json
