#include "common/json_reader.h"

#include <bit>
#include <cstring>

#include <rapidjson/document.h>
#include <rapidjson/reader.h>

#include "common/strict_json.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace dispatchd::json {

double Number::as_double() const {
  switch (kind) {
    case Kind::int64: return static_cast<double>(i);
    case Kind::uint64: return static_cast<double>(u);
    case Kind::real: return d;
  }
  return d;
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The first index at or after `i` whose byte ends a run of plain string content (a quote,
// a backslash or a control character), or text.size().
std::size_t plain_run_end(std::string_view text, std::size_t i) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size();
#if defined(__SSE2__)
  // Sixteen bytes per step, loads never past the end (the tail goes byte by byte).
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i control_max = _mm_set1_epi8(0x1F);
  while (i + 16 <= size) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + i));
    const __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(chunk, control_max), control_max);  // chunk <= 0x1F
    const __m128i stop =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)), control);
    if (const int mask = _mm_movemask_epi8(stop))
      return i + static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(mask)));
    i += 16;
  }
#endif
  while (i < size && bytes[i] != '"' && bytes[i] != '\\' && bytes[i] >= 0x20) ++i;
  return i;
}

// What the one-letter escape `\e` stands for (`\n`: a newline), or 0 for any other letter.
char simple_escape(char e) {
  switch (e) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return 0;
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Appends `code_point` as UTF-8 (U+0000 included, as one zero byte: RapidJSON does the same).
char* put_utf8(char* out, unsigned code_point) {
  if (code_point < 0x80) {
    *out++ = static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    *out++ = static_cast<char>(0xC0 | (code_point >> 6));
    *out++ = static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    *out++ = static_cast<char>(0xE0 | (code_point >> 12));
    *out++ = static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    *out++ = static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    *out++ = static_cast<char>(0xF0 | (code_point >> 18));
    *out++ = static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    *out++ = static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    *out++ = static_cast<char>(0x80 | (code_point & 0x3F));
  }
  return out;
}

// Takes the one number RapidJSON reads; any other event refuses.
struct NumberHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, NumberHandler> {
  Number number;
  bool Default() { return false; }
  bool Int(int v) { return set_signed(v); }
  bool Int64(std::int64_t v) { return set_signed(v); }
  bool Uint(unsigned v) { return set_unsigned(v); }
  bool Uint64(std::uint64_t v) { return set_unsigned(v); }
  bool Double(double v) {
    number.kind = Number::Kind::real;
    number.d = v;
    return true;
  }
  bool set_signed(std::int64_t v) {
    number.kind = Number::Kind::int64;
    number.i = v;
    return true;
  }
  bool set_unsigned(std::uint64_t v) {
    number.kind = Number::Kind::uint64;
    number.u = v;
    return true;
  }
};

}  // namespace

// One pass over the text: checks the grammar, records the top-level members, decodes
// strings that have escapes, and writes the compact copy. Containers are tracked on an
// explicit stack, so nesting never recurses.
class Reader {
 public:
  // `compact` has room for text.size() bytes.
  Reader(std::string_view text, std::size_t max_depth, Object& out, char* compact)
      : m_text(text), m_max_depth(max_depth), m_out(out), m_compact_begin(compact), m_compact(compact) {}

  std::size_t compact_size() const { return static_cast<std::size_t>(m_compact - m_compact_begin); }

  // Reads up to the end of the top-level object, leaving m_pos just past it.
  bool read() {
    prepare_output();
    skip_space();
    if (peek() != '{' || !open()) return false;
    bool after_open = true;  // no element yet in the innermost container
    for (;;) {
      // An element, or the end of the innermost container: empty, or after a trailing comma.
      skip_space();
      if (peek() == closer()) {
        if (!after_open) m_out.m_trailing_commas = true;
        close();
        if (m_open.empty()) return finish();
      } else {
        if (m_open.back().object && !read_key()) return false;
        if (peek() == '{' || peek() == '[') {
          if (!open()) return false;
          after_open = true;
          continue;
        }
        if (!read_scalar()) return false;
      }
      // After a value: a comma, or the end of one or more containers.
      for (;;) {
        skip_space();
        if (peek() == ',') {
          ++m_pos;
          after_open = false;
          break;
        }
        if (peek() != closer()) return false;
        close();
        if (m_open.empty()) return finish();
      }
    }
  }

  std::size_t position() const { return m_pos; }

 private:
  // The top-level object is closed: the rest of the compact copy.
  bool finish() {
    copy_pending();
    return true;
  }

  struct Frame {
    bool object;
    std::size_t begin;       // where its opening bracket is
    std::size_t keys_begin;  // where its keys start in m_keys
  };

  void prepare_output() {
    m_out.m_members.clear();
    m_out.m_trailing_commas = false;
    // Decoded strings never outgrow the text.
    if (m_text.size() <= sizeof m_out.m_inline_decoded) {
      m_decoded = m_out.m_inline_decoded;
    } else {
      m_out.m_heap_decoded = std::make_unique_for_overwrite<char[]>(m_text.size());
      m_decoded = m_out.m_heap_decoded.get();
    }
  }

  char peek() const { return m_pos < m_text.size() ? m_text[m_pos] : '\0'; }
  char closer() const { return m_open.back().object ? '}' : ']'; }
  // Whitespace between tokens is where the compact copy differs from the text: the text
  // before it is copied over in one piece, the whitespace is not. A reply written
  // without whitespace is copied with one memcpy at the end.
  void skip_space() {
    if (m_pos >= m_text.size() || !is_space(m_text[m_pos])) return;
    copy_pending();
    while (m_pos < m_text.size() && is_space(m_text[m_pos])) ++m_pos;
    m_copied = m_pos;
  }
  void copy_pending() {
    std::memcpy(m_compact, m_text.data() + m_copied, m_pos - m_copied);
    m_compact += m_pos - m_copied;
  }

  bool open() {
    if (m_open.size() >= m_max_depth) return false;
    m_open.push_back({peek() == '{', m_pos, m_keys.size()});
    ++m_pos;
    return true;
  }
  // Closes the innermost container; a container directly inside the top-level object is
  // one of its member values.
  void close() {
    const Frame frame = m_open.back();
    m_open.pop_back();
    m_keys.truncate(frame.keys_begin);
    ++m_pos;
    if (m_open.size() == 1) {
      Value value;
      value.type = frame.object ? Type::object : Type::array;
      value.raw = m_text.substr(frame.begin, m_pos - frame.begin);
      add_member(value);
    }
  }
  void add_member(const Value& value) { m_out.m_members.push_back({m_member_key, value}); }

  // A key, unique in its object (compared decoded, as RapidJSON hands keys over), and the
  // colon after it.
  bool read_key() {
    std::string_view key;
    if (peek() != '"' || !read_string(key)) return false;
    for (std::size_t i = m_open.back().keys_begin; i < m_keys.size(); ++i) {
      if (m_keys[i] == key) return false;
    }
    m_keys.push_back(key);
    if (m_open.size() == 1) m_member_key = key;
    skip_space();
    if (peek() != ':') return false;
    ++m_pos;
    skip_space();
    return true;
  }

  bool read_scalar() {
    Value value;
    const std::size_t begin = m_pos;
    const char c = peek();
    bool ok = false;
    if (c == '"') {
      value.type = Type::string;
      ok = read_string(value.text);
    } else if (c == '-' || is_digit(c)) {
      value.type = Type::number;
      ok = read_number(value.number);
    } else {
      ok = read_literal(value);
    }
    if (!ok) return false;
    value.raw = m_text.substr(begin, m_pos - begin);
    if (m_open.size() == 1) add_member(value);
    return true;
  }

  bool read_literal(Value& value) {
    const std::string_view rest = m_text.substr(m_pos);
    std::string_view word;
    if (rest.starts_with("true")) {
      word = "true";
      value.type = Type::boolean;
      value.boolean = true;
    } else if (rest.starts_with("false")) {
      word = "false";
      value.type = Type::boolean;
    } else if (rest.starts_with("null")) {
      word = "null";
      value.type = Type::null;
    } else {
      return false;
    }
    m_pos += word.size();
    return true;
  }

  // The string whose opening quote is at m_pos. Plain content is a view into the text;
  // content with escapes is decoded into the object's buffer.
  bool read_string(std::string_view& decoded) {
    const std::size_t open = m_pos;
    const std::size_t stop = plain_run_end(m_text, open + 1);
    if (stop < m_text.size() && m_text[stop] == '"') {
      decoded = m_text.substr(open + 1, stop - open - 1);
      m_pos = stop + 1;
      return true;
    }
    return read_escaped_string(open, stop, decoded);
  }

  // The rest of the string opened at `open`, from `stop`, where plain content ended without
  // a closing quote. Kept out of line, so that read_string, which most strings need only
  // the start of, stays small enough to inline.
  [[gnu::noinline]] bool read_escaped_string(std::size_t open, std::size_t stop, std::string_view& decoded) {
    char* const begin = m_decoded;
    char* out = begin;
    std::size_t from = open + 1;
    std::size_t i = stop;
    for (;;) {
      std::memcpy(out, m_text.data() + from, i - from);
      out += i - from;
      if (i >= m_text.size() || m_text[i] != '\\') break;  // closing quote, control character or end
      if (!decode_escape(i, out)) return false;
      from = i;
      i = plain_run_end(m_text, i);
    }
    if (i >= m_text.size() || m_text[i] != '"') return false;
    decoded = std::string_view(begin, static_cast<std::size_t>(out - begin));
    m_decoded = out;
    m_pos = i + 1;
    return true;
  }

  // The escape whose backslash is at `i`: appends what it stands for and moves `i` past it.
  // Refuses what strict parsing refuses: unknown escapes, and surrogates that are not a
  // high-low pair (a lone low surrogate decodes to bytes that are not UTF-8).
  bool decode_escape(std::size_t& i, char*& out) {
    if (i + 1 >= m_text.size()) return false;
    const char e = m_text[i + 1];
    if (const char meaning = simple_escape(e)) {
      *out++ = meaning;
      i += 2;
      return true;
    }
    unsigned code_point = 0;
    if (e != 'u' || !hex4(i + 2, code_point)) return false;
    i += 6;
    if (code_point >= 0xDC00 && code_point <= 0xDFFF) return false;
    if (code_point >= 0xD800 && code_point <= 0xDBFF) {
      unsigned low = 0;
      if (i + 1 >= m_text.size() || m_text[i] != '\\' || m_text[i + 1] != 'u' || !hex4(i + 2, low)) return false;
      if (low < 0xDC00 || low > 0xDFFF) return false;
      i += 6;
      code_point = 0x10000 + ((code_point - 0xD800) << 10) + (low - 0xDC00);
    }
    out = put_utf8(out, code_point);
    return true;
  }

  bool hex4(std::size_t at, unsigned& value) const {
    if (at + 4 > m_text.size()) return false;
    value = 0;
    for (std::size_t k = at; k < at + 4; ++k) {
      const int digit = hex_value(m_text[k]);
      if (digit < 0) return false;
      value = value * 16 + static_cast<unsigned>(digit);
    }
    return true;
  }

  // A number: the JSON grammar is checked here; range and value come from RapidJSON's own
  // number reader, so that both agree on what is too large and on every double.
  bool read_number(Number& number) {
    const std::size_t begin = m_pos;
    std::size_t i = begin + (peek() == '-' ? 1 : 0);
    const auto digits = [&] {
      const std::size_t from = i;
      while (i < m_text.size() && is_digit(m_text[i])) ++i;
      return i > from;
    };
    if (i < m_text.size() && m_text[i] == '0') {
      ++i;
    } else if (!digits()) {
      return false;
    }
    if (i < m_text.size() && m_text[i] == '.') {
      ++i;
      if (!digits()) return false;
    }
    if (i < m_text.size() && (m_text[i] == 'e' || m_text[i] == 'E')) {
      ++i;
      if (i < m_text.size() && (m_text[i] == '+' || m_text[i] == '-')) ++i;
      if (!digits()) return false;
    }
    // A number is never last in an object's text; this also keeps RapidJSON, which reads
    // up to the first byte that cannot continue the number, inside the text.
    if (i >= m_text.size()) return false;
    rapidjson::StringStream stream(m_text.data() + begin);
    NumberHandler handler;
    rapidjson::Reader reader;
    if (reader.Parse<rapidjson::kParseStopWhenDoneFlag>(stream, handler).IsError()) return false;
    if (stream.Tell() != i - begin) return false;
    number = handler.number;
    m_pos = i;
    return true;
  }

  std::string_view m_text;
  std::size_t m_pos = 0;
  std::size_t m_max_depth;
  Object& m_out;
  char* m_decoded = nullptr;  // the next free byte for decoded strings
  char* const m_compact_begin;
  char* m_compact;                           // the next free byte of the compact copy
  std::size_t m_copied = 0;                  // the text before this is in the compact copy (or skipped)
  SmallVector<Frame, 32> m_open;             // the containers open at m_pos, outermost first
  SmallVector<std::string_view, 32> m_keys;  // the keys of the open objects, outermost first
  std::string_view m_member_key;             // the top-level key whose value comes next
};

std::optional<std::size_t> read_object_prefix(std::string_view text, std::size_t max_depth, Object& out) {
  std::optional<std::size_t> end;
  // The compact copy is never longer than the text, and is written in place: no zero fill.
  out.m_compact.resize_and_overwrite(text.size(), [&](char* buffer, std::size_t) {
    Reader reader(text, max_depth, out, buffer);
    if (reader.read()) end = reader.position();
    return reader.compact_size();
  });
  return end;
}

bool read_object(std::string_view text, std::size_t max_depth, Object& out) {
  const auto end = read_object_prefix(text, max_depth, out);
  if (!end) return false;
  const std::size_t rest = text.find_first_not_of(" \t\r\n", *end);  // JSON whitespace only
  return rest == std::string_view::npos;
}

const char* type_name(const Value& value) {
  switch (value.type) {
    case Type::string: return "string";
    case Type::boolean: return "boolean";
    case Type::null: return "null";
    case Type::object: return "object";
    case Type::array: return "array";
    case Type::number: return value.number.is_integer() ? "integer" : "number";
  }
  return "?";
}

std::string to_string(const Value& value) {
  switch (value.type) {
    case Type::string: return to_string(rapidjson::Value(rapidjson::StringRef(value.text.data(), value.text.size())));
    case Type::number:
      switch (value.number.kind) {
        case Number::Kind::int64: return to_string(rapidjson::Value(static_cast<std::int64_t>(value.number.i)));
        case Number::Kind::uint64: return to_string(rapidjson::Value(static_cast<std::uint64_t>(value.number.u)));
        case Number::Kind::real: return to_string(rapidjson::Value(value.number.d));
      }
      break;
    case Type::boolean:
    case Type::null: return std::string(value.raw);
    case Type::object:
    case Type::array: break;
  }
  // Nested values keep only their text: parse it again (it was read once, so it parses).
  auto parsed = parse_strict(value.raw, k_checked_json_limits, true);
  return parsed ? to_string(parsed->document) : std::string(value.raw);
}

}  // namespace dispatchd::json
