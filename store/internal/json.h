#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: builds the compact JSON of audit details and stored documents, so
// that no value is ever pasted into JSON text unescaped.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "store/states.h"

namespace dispatchd::store {

class JsonObject {
 public:
  JsonObject() : m_writer(m_buffer) { m_writer.StartObject(); }

  JsonObject& add(std::string_view key, std::string_view value) {
    write_key(key);
    m_writer.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
    return *this;
  }
  JsonObject& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
  JsonObject& add(std::string_view key, const std::string& value) { return add(key, std::string_view(value)); }
  template <typename E>
  requires std::is_enum_v<E> JsonObject& add(std::string_view key, E value) { return add(key, to_sql(value)); }
  JsonObject& add(std::string_view key, std::int64_t value) {
    write_key(key);
    m_writer.Int64(value);
    return *this;
  }
  // `json` must be one valid JSON value (e.g. a validated action); it is copied as is.
  JsonObject& add_raw(std::string_view key, std::string_view json) {
    write_key(key);
    m_writer.RawValue(json.data(), json.size(), rapidjson::kObjectType);
    return *this;
  }

  std::string str() {
    if (!m_closed) {
      m_writer.EndObject();
      m_closed = true;
    }
    return std::string(m_buffer.GetString(), m_buffer.GetSize());
  }

 private:
  void write_key(std::string_view key) { m_writer.Key(key.data(), static_cast<rapidjson::SizeType>(key.size())); }
  rapidjson::StringBuffer m_buffer;
  rapidjson::Writer<rapidjson::StringBuffer> m_writer;
  bool m_closed = false;
};

}  // namespace dispatchd::store
