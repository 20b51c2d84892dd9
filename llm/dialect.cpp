#include "llm/internal/dialect.h"

#include "common/strict_json.h"
#include "common/text.h"

namespace dispatchd::llm::detail {

void write_string(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

void write_raw(Writer& w, std::string_view json) { w.RawValue(json.data(), json.size(), rapidjson::kObjectType); }

void write_message(Writer& w, std::string_view role, std::string_view content) {
  w.StartObject();
  w.Key("role");
  write_string(w, role);
  w.Key("content");
  write_string(w, content);
  w.EndObject();
}

void write_chat_turns(Writer& w, const std::vector<Turn>& turns) {
  for (const Turn& turn : turns) write_message(w, turn.role == Role::user ? "user" : "assistant", turn.text);
}

void write_optional_int(Writer& w, const char* key, const std::optional<int>& value) {
  if (!value) return;
  w.Key(key);
  w.Int(*value);
}

void write_optional_double(Writer& w, const char* key, const std::optional<double>& value) {
  if (!value) return;
  w.Key(key);
  w.Double(*value);
}

net::HttpRequest json_post(const ProviderConfig& config, std::string_view path, std::string body) {
  std::string_view base = config.base_url;
  while (base.ends_with('/')) base.remove_suffix(1);
  net::HttpRequest request;
  request.method = "POST";
  request.url = std::string(base) + std::string(path);
  request.headers.add("Content-Type", "application/json");
  request.body = std::move(body);
  request.timeout = config.timeout;
  request.connect_timeout = config.connect_timeout;
  return request;
}

std::expected<rapidjson::Document, std::string> parse_body(std::string_view body) {
  // Provider JSON nests a few levels, plus the model's own object inside Anthropic's tool
  // input (the validator applies its own, tighter limit to that).
  auto parsed = json::parse_strict(body, {.max_depth = 64});
  if (!parsed)
    return std::unexpected("response is not JSON (" + parsed.error().code + ": " + parsed.error().message + ")");
  if (!parsed->document.IsObject()) return std::unexpected("response is not a JSON object");
  return std::move(parsed->document);
}

const rapidjson::Value* member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  const auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

const rapidjson::Value* object_member(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* value = member(object, name);
  return value && value->IsObject() ? value : nullptr;
}

const rapidjson::Value* array_member(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* value = member(object, name);
  return value && value->IsArray() ? value : nullptr;
}

std::optional<std::string> string_member(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* value = member(object, name);
  if (!value || !value->IsString()) return std::nullopt;
  return std::string(value->GetString(), value->GetStringLength());
}

std::int64_t count_member(const rapidjson::Value* object, const char* name) {
  if (!object) return 0;
  const rapidjson::Value* value = member(*object, name);
  return value && value->IsInt64() ? value->GetInt64() : 0;
}

std::string quoted(std::string_view value) { return text::quote(value, 200); }

}  // namespace dispatchd::llm::detail
