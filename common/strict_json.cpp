#include "common/strict_json.h"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/text.h"
#include "common/utf8.h"

namespace dispatchd::json {
namespace {

// Forwards SAX events to the document being built while enforcing what RapidJSON does not:
// depth, unique keys, and no surrogates smuggled in through \u escapes (the raw bytes were
// checked before parsing; escapes are decoded by RapidJSON, which lets a lone low
// surrogate through).
class StrictHandler {
 public:
  StrictHandler(rapidjson::Document& target, const ParseLimits& limits) : m_target(target), m_limits(limits) {
    m_keys.reserve(16);
    m_level_starts.reserve(8);
  }

  bool Null() { return m_target.Null(); }
  bool Bool(bool b) { return m_target.Bool(b); }
  bool Int(int i) { return m_target.Int(i); }
  bool Uint(unsigned u) { return m_target.Uint(u); }
  bool Int64(std::int64_t i) { return m_target.Int64(i); }
  bool Uint64(std::uint64_t u) { return m_target.Uint64(u); }
  bool Double(double d) { return m_target.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return m_target.RawNumber(s, n, copy); }

  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return check_text(std::string_view(s, n)) && m_target.String(s, n, copy);
  }
  bool StartObject() {
    if (!enter()) return false;
    m_level_starts.push_back(m_keys.size());
    return m_target.StartObject();
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    const std::string_view key(s, n);
    if (!check_text(key)) return false;
    // Keys of the open objects, innermost last. A linear scan: reply objects are small,
    // and the reply size limit bounds the worst case.
    for (std::size_t i = m_level_starts.back(); i < m_keys.size(); ++i) {
      if (m_keys[i] == key) {
        m_failure = {"duplicate_key", "duplicate key " + text::quote(key) + " in one object", 0};
        return false;
      }
    }
    m_keys.emplace_back(key);
    return m_target.Key(s, n, copy);
  }
  bool EndObject(rapidjson::SizeType members) {
    m_keys.resize(m_level_starts.back());
    m_level_starts.pop_back();
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
    if (!utf8::has_encoded_surrogate(s)) return true;
    m_failure = {"invalid_string", "a string holds a lone surrogate escape", 0};
    return false;
  }

  rapidjson::Document& m_target;
  const ParseLimits& m_limits;
  std::size_t m_depth = 0;
  std::vector<std::string> m_keys;          // keys of every open object, outermost first
  std::vector<std::size_t> m_level_starts;  // where each open object's keys begin
  ParseError m_failure;
};

// Encoding is checked once over the whole text before parsing (utf8::first_invalid is
// faster than RapidJSON's per-character validation, which also disables its fast paths).
constexpr unsigned k_strict_flags = rapidjson::kParseIterativeFlag;

ParseError describe(rapidjson::ParseErrorCode code, std::size_t offset, std::string_view text) {
  using namespace rapidjson;
  if (offset >= text.size() && code != kParseErrorDocumentEmpty) {
    return {"truncated", "the JSON ends before it is complete", offset};
  }
  switch (code) {
    case kParseErrorDocumentEmpty: return {"empty", "no JSON value", offset};
    case kParseErrorNumberTooBig: return {"number_out_of_range", "a number is too large to represent", offset};
    case kParseErrorStringUnicodeSurrogateInvalid:
    case kParseErrorStringInvalidEncoding:
      return {"invalid_string", "a string holds invalid UTF-8 or a lone surrogate escape", offset};
    case kParseErrorObjectMissName: return {"syntax", "object keys must be double-quoted strings", offset};
    default: break;
  }
  std::string message = GetParseError_En(code);
  if (!message.empty() && message.back() == '.') message.pop_back();
  message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  return {"syntax", message + " (near " + text::quote(text.substr(offset), 16) + ")", offset};
}

template <unsigned Flags>
std::expected<rapidjson::Document, ParseError> parse_with(std::string_view text, const ParseLimits& limits,
                                                          ParseArena* arena) {
  // REQUIRES: text.data()[text.size()] == '\0'. StringStream stops at a NUL byte; a raw
  // NUL is never valid JSON, so it only changes which error is reported.
  rapidjson::StringStream stream(text.data());
  // Stacks sized for a typical reply up front, so that parsing it does not grow them. The
  // reader's stack lives in a local buffer (a pool allocator over it, spilling to the heap
  // only for large strings), which saves a malloc/free pair per parse.
  constexpr std::size_t k_stack_bytes = 4096;
  alignas(8) char reader_buffer[k_stack_bytes + 64];  // + room for the pool's chunk header
  rapidjson::MemoryPoolAllocator<> reader_pool(reader_buffer, sizeof reader_buffer);
  rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>> reader(
      &reader_pool, k_stack_bytes);
  ParseError handler_failure;
  auto generator = [&](rapidjson::Document& target) {
    StrictHandler handler(target, limits);
    const bool ok = !reader.Parse<Flags>(stream, handler).IsError();
    if (!ok) handler_failure = handler.failure();
    return ok;
  };
  rapidjson::Document document(arena ? arena->allocator() : nullptr, k_stack_bytes);
  document.Populate(generator);
  if (!reader.HasParseError()) {
    if (stream.Tell() < text.size())
      return std::unexpected(ParseError{"syntax", "a NUL byte is not JSON", stream.Tell()});
    return document;
  }
  const std::size_t offset = reader.GetErrorOffset();
  if (reader.GetParseErrorCode() != rapidjson::kParseErrorTermination) {
    return std::unexpected(describe(reader.GetParseErrorCode(), offset, text));
  }
  handler_failure.offset = offset;
  return std::unexpected(handler_failure);
}

// Strictly first; when that fails on syntax and trailing commas are allowed, once more
// accepting them.
template <unsigned Flags>
std::expected<Parsed, ParseError> parse_text(std::string_view text, const ParseLimits& limits,
                                             bool allow_trailing_commas, ParseArena* arena) {
  auto strict = parse_with<Flags>(text, limits, arena);
  if (strict) return Parsed{std::move(*strict), false};
  if (allow_trailing_commas && strict.error().code == "syntax") {
    auto lenient = parse_with<Flags | rapidjson::kParseTrailingCommasFlag>(text, limits, arena);
    if (lenient) return Parsed{std::move(*lenient), true};
  }
  return std::unexpected(strict.error());
}

}  // namespace

std::expected<Parsed, ParseError> parse_strict(std::string_view raw, const ParseLimits& limits,
                                               bool allow_trailing_commas, ParseArena* arena) {
  if (!limits.input_utf8_checked) {
    if (const auto bad = utf8::first_invalid(raw)) {
      return std::unexpected(ParseError{"invalid_string", "invalid UTF-8", *bad});
    }
  }
  // A NUL-terminated copy for RapidJSON's fastest stream; a typical reply fits on the
  // stack, larger ones go to the heap.
  constexpr std::size_t k_inline_text = 2048;
  char inline_text[k_inline_text];
  std::string heap_text;
  std::string_view text;
  if (raw.size() < k_inline_text) {
    std::memcpy(inline_text, raw.data(), raw.size());
    inline_text[raw.size()] = '\0';
    text = std::string_view(inline_text, raw.size());
  } else {
    heap_text.assign(raw);
    text = heap_text;
  }
  if (limits.allow_comments) {
    return parse_text<k_strict_flags | rapidjson::kParseCommentsFlag>(text, limits, allow_trailing_commas, arena);
  }
  return parse_text<k_strict_flags>(text, limits, allow_trailing_commas, arena);
}

std::size_t string_end(std::string_view text, std::size_t open, std::size_t end) {
  const char* base = text.data();
  for (std::size_t from = open + 1; from < end;) {
    const void* hit = std::memchr(base + from, '"', end - from);
    if (!hit) return std::string_view::npos;
    const auto quote = static_cast<std::size_t>(static_cast<const char*>(hit) - base);
    std::size_t backslashes = 0;
    while (quote - backslashes > open + 1 && base[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return quote;
    from = quote + 1;
  }
  return std::string_view::npos;
}

std::string minify(std::string_view valid_json) {
  // Written through a pointer into a buffer sized for the worst case (nothing removed)
  // and left uninitialized: no per-character capacity checks, and strings go in with one
  // memcpy.
  std::string out;
  out.resize_and_overwrite(valid_json.size(), [valid_json](char* const begin, std::size_t) {
    char* dst = begin;
    const char* src = valid_json.data();
    const std::size_t size = valid_json.size();
    for (std::size_t i = 0; i < size;) {
      const char c = src[i];
      if (c == '"') {
        const std::size_t close = string_end(valid_json, i, size);
        const std::size_t stop = close == std::string_view::npos ? size : close + 1;
        std::memcpy(dst, src + i, stop - i);
        dst += stop - i;
        i = stop;
        continue;
      }
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') *dst++ = c;
      ++i;
    }
    return static_cast<std::size_t>(dst - begin);
  });
  return out;
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
