#pragma once
// JSON documents written field by field (dispatchctl --json, the staff API): strings escaped,
// stored JSON columns embedded as JSON (not as strings).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace dispatchd {

class JsonOut {
 public:
  JsonOut() : m_writer(m_buffer) {}

  JsonOut& begin_object() { return step(m_writer.StartObject()); }
  JsonOut& end_object() { return step(m_writer.EndObject()); }
  JsonOut& begin_array(std::string_view key) { return this->key(key).step(m_writer.StartArray()); }
  JsonOut& begin_array() { return step(m_writer.StartArray()); }
  JsonOut& end_array() { return step(m_writer.EndArray()); }
  JsonOut& begin_object(std::string_view key) { return this->key(key).begin_object(); }

  JsonOut& field(std::string_view key, std::string_view value) {
    this->key(key);
    return step(m_writer.String(value.data(), static_cast<rapidjson::SizeType>(value.size())));
  }
  JsonOut& field(std::string_view key, const char* value) { return field(key, std::string_view(value)); }
  JsonOut& field(std::string_view key, const std::string& value) { return field(key, std::string_view(value)); }
  JsonOut& field(std::string_view key, std::int64_t value) { return this->key(key).step(m_writer.Int64(value)); }
  JsonOut& field(std::string_view key, bool value) { return this->key(key).step(m_writer.Bool(value)); }
  template <typename T>
  JsonOut& field(std::string_view key, const std::optional<T>& value) {
    if (value) return field(key, *value);
    return this->key(key).step(m_writer.Null());
  }
  // `json` is a stored JSON document (validated when it was written); null when absent.
  JsonOut& raw(std::string_view key, const std::optional<std::string>& json) {
    this->key(key);
    if (!json || json->empty()) return step(m_writer.Null());
    return step(m_writer.RawValue(json->data(), json->size(), rapidjson::kObjectType));
  }

  std::string str() const { return std::string(m_buffer.GetString(), m_buffer.GetSize()); }

 private:
  JsonOut& key(std::string_view key) {
    m_writer.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    return *this;
  }
  JsonOut& step(bool) { return *this; }
  rapidjson::StringBuffer m_buffer;
  rapidjson::Writer<rapidjson::StringBuffer> m_writer;
};

}  // namespace dispatchd
