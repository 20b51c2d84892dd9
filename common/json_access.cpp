#include "common/json_access.h"

namespace dispatchd::json {

const rapidjson::Value* member(Lookup object, std::string_view name) {
  const rapidjson::Value* value = object.get();
  if (value == nullptr || !value->IsObject()) return nullptr;
  // A key Value that refers to `name` without copying it (FindMember compares lengths and bytes).
  const rapidjson::Value key(rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size())));
  const auto it = value->FindMember(key);
  return it == value->MemberEnd() ? nullptr : &it->value;
}

const rapidjson::Value* object_member(Lookup object, std::string_view name) {
  const rapidjson::Value* value = member(object, name);
  return value != nullptr && value->IsObject() ? value : nullptr;
}

const rapidjson::Value* array_member(Lookup object, std::string_view name) {
  const rapidjson::Value* value = member(object, name);
  return value != nullptr && value->IsArray() ? value : nullptr;
}

std::optional<std::string> string_member(Lookup object, std::string_view name) {
  const rapidjson::Value* value = member(object, name);
  if (value == nullptr || !value->IsString()) return std::nullopt;
  return std::string(value->GetString(), value->GetStringLength());
}

std::optional<std::int64_t> int_member(Lookup object, std::string_view name) {
  const rapidjson::Value* value = member(object, name);
  if (value == nullptr || !value->IsInt64()) return std::nullopt;
  return value->GetInt64();
}

std::optional<double> number_member(Lookup object, std::string_view name) {
  const rapidjson::Value* value = member(object, name);
  if (value == nullptr || !value->IsNumber()) return std::nullopt;
  return value->GetDouble();
}

std::optional<bool> bool_member(Lookup object, std::string_view name) {
  const rapidjson::Value* value = member(object, name);
  if (value == nullptr || !value->IsBool()) return std::nullopt;
  return value->GetBool();
}

std::string_view string_of(Lookup value) {
  const rapidjson::Value* v = value.get();
  if (v == nullptr || !v->IsString()) return {};
  return {v->GetString(), v->GetStringLength()};
}

}  // namespace dispatchd::json
