#pragma once
// The one JSON writer. Every JSON text dispatchd writes goes through it: audit details and
// stored columns, provider and Graph API requests, the staff API's answers, dispatchctl's
// --json output, rendered schemas. No value is ever pasted into JSON text by hand.
//
// What it writes (the audit hash chain, the tests and the docs depend on these bytes, so
// they do not change): RapidJSON's Writer, or its PrettyWriter indenting by two spaces.
//  - strings: `"` and `\` escaped with a backslash; control characters as \b \t \n \f \r,
//    the others as \u00XX (upper-case hex); `/`, DEL and every byte >= 0x80 as they are
//    (no validation: callers pass UTF-8, e.g. text that utf8::is_valid checked);
//  - integers in decimal; doubles as RapidJSON writes them (shortest round trip: 0.2,
//    1.0, 1e21); NaN and infinities are not JSON: REQUIRES finite doubles;
//  - members and elements in call order; `compact`: no whitespace at all.
//
// Calls chain: JsonOut().begin_object().field("ok", true).end_object().str(). REQUIRES: the
// calls form one value (a key for each member, each end_ matching its begin_); RapidJSON
// asserts it in debug builds only. Cheap: everything inlines into RapidJSON's writer, which
// writes into a growing buffer (no allocation per value).

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace dispatchd {

enum class JsonLayout {
  compact,  // no whitespace: everything stored, sent or answered
  pretty,   // two-space indents, one member or element per line: schemas shown to people
};

template <JsonLayout Layout>
class BasicJsonOut {
 public:
  BasicJsonOut() : m_writer(m_buffer) {
    if constexpr (Layout == JsonLayout::pretty) m_writer.SetIndent(' ', 2);
  }
  // The writer points into the object itself.
  BasicJsonOut(const BasicJsonOut&) = delete;
  BasicJsonOut& operator=(const BasicJsonOut&) = delete;

  // Containers: the forms with a key open a member of the enclosing object.
  BasicJsonOut& begin_object() { return step(m_writer.StartObject()); }
  BasicJsonOut& begin_object(std::string_view key) { return this->key(key).begin_object(); }
  BasicJsonOut& end_object() { return step(m_writer.EndObject()); }
  BasicJsonOut& begin_array() { return step(m_writer.StartArray()); }
  BasicJsonOut& begin_array(std::string_view key) { return this->key(key).begin_array(); }
  BasicJsonOut& end_array() { return step(m_writer.EndArray()); }

  // A value: an element of the enclosing array, or the whole document. Strings (also
  // const char* and std::string), integers of any width, bool, finite floating point,
  // nullptr (null), and std::optional of these (null when empty). Other types, enums
  // included, do not compile: say how they are written (to_sql, to_string) at the call.
  BasicJsonOut& value(std::string_view s) {
    return step(m_writer.String(s.data(), static_cast<rapidjson::SizeType>(s.size())));
  }
  template <typename T>
  requires std::same_as<T, bool> BasicJsonOut& value(T b) { return step(m_writer.Bool(b)); }
  template <std::integral T>
  requires(!std::same_as<T, bool>) BasicJsonOut& value(T i) {
    if constexpr (std::is_signed_v<T>)
      return step(m_writer.Int64(static_cast<std::int64_t>(i)));
    else
      return step(m_writer.Uint64(static_cast<std::uint64_t>(i)));
  }
  template <std::floating_point T>
  BasicJsonOut& value(T d) {
    return step(m_writer.Double(static_cast<double>(d)));
  }
  BasicJsonOut& value(std::nullptr_t) { return step(m_writer.Null()); }
  template <typename T>
  BasicJsonOut& value(const std::optional<T>& v) {
    if (v) return value(*v);
    return step(m_writer.Null());
  }

  // A member of the enclosing object: "key": value, for any value value() takes.
  template <typename T>
  BasicJsonOut& field(std::string_view key, const T& v) {
    return this->key(key).value(v);
  }
  // The member only when `v` is set; nothing at all otherwise.
  template <typename T>
  BasicJsonOut& field_if_set(std::string_view key, const std::optional<T>& v) {
    return v ? field(key, *v) : *this;
  }

  // Already-valid JSON copied in as it is, as an element or as a member. REQUIRES: `json`
  // is exactly one JSON value (e.g. a validated reply, a rendered schema, a stored column).
  BasicJsonOut& raw(std::string_view json) {
    return step(m_writer.RawValue(json.data(), json.size(), rapidjson::kObjectType));
  }
  BasicJsonOut& raw(std::string_view key, std::string_view json) { return this->key(key).raw(json); }
  // A stored JSON column: null when absent (SQL NULL) or empty, else copied in as it is.
  BasicJsonOut& raw_or_null(std::string_view key, const std::optional<std::string>& json) {
    this->key(key);
    if (!json || json->empty()) return step(m_writer.Null());
    return raw(*json);
  }

  // The text written so far: the document once the outermost value is closed.
  std::string str() const { return std::string(m_buffer.GetString(), m_buffer.GetSize()); }

 private:
  using Writer = std::conditional_t<Layout == JsonLayout::compact, rapidjson::Writer<rapidjson::StringBuffer>,
                                    rapidjson::PrettyWriter<rapidjson::StringBuffer>>;

  BasicJsonOut& key(std::string_view key) {
    return step(m_writer.Key(key.data(), static_cast<rapidjson::SizeType>(key.size())));
  }
  // RapidJSON's writer answers false only for a NaN or an infinity, which REQUIRES rules out.
  BasicJsonOut& step(bool) { return *this; }

  rapidjson::StringBuffer m_buffer;
  Writer m_writer;
};

using JsonOut = BasicJsonOut<JsonLayout::compact>;
using PrettyJsonOut = BasicJsonOut<JsonLayout::pretty>;

}  // namespace dispatchd
