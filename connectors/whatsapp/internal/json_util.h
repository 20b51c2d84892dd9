#pragma once
#ifndef DISPATCHD_INTERNAL_CONNECTORS
#error "connectors/whatsapp/internal/ is private to connectors/: include the module's public headers instead"
#endif
// Reading RapidJSON values defensively, for the WhatsApp connector's .cpp files (an
// internal header: it exposes RapidJSON). Every accessor tolerates a missing member or a
// value of the wrong type and says so by its result, never by an assertion.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "connectors/whatsapp/errors.h"

namespace dispatchd::whatsapp::detail {

// The member `name` of `value` when `value` is an object that has it; else nullptr.
inline const rapidjson::Value* member(const rapidjson::Value* value, const char* name) {
  if (value == nullptr || !value->IsObject()) return nullptr;
  const auto it = value->FindMember(name);
  return it == value->MemberEnd() ? nullptr : &it->value;
}

// The string `value` holds, or "" when it is missing or not a string.
inline std::string_view string_of(const rapidjson::Value* value) {
  if (value == nullptr || !value->IsString()) return {};
  return {value->GetString(), value->GetStringLength()};
}

inline std::string string_at(const rapidjson::Value* object, const char* name) {
  return std::string(string_of(member(object, name)));
}

inline std::optional<std::int64_t> int_at(const rapidjson::Value* object, const char* name) {
  const rapidjson::Value* value = member(object, name);
  if (value == nullptr || !value->IsInt64()) return std::nullopt;
  return value->GetInt64();
}

// A Graph error object: the `error` of a failed API response or an element of a webhook's
// errors[] (code, title, message, error_subcode, type, fbtrace_id, error_data.details).
inline GraphError graph_error(const rapidjson::Value& object, int http_status) {
  GraphError error;
  error.http_status = http_status;
  error.code = int_at(&object, "code");
  error.subcode = int_at(&object, "error_subcode");
  error.type = string_at(&object, "type");
  error.title = string_at(&object, "title");
  error.message = string_at(&object, "message");
  error.details = string_at(member(&object, "error_data"), "details");
  error.fbtrace_id = string_at(&object, "fbtrace_id");
  return error;
}

// Appends every object of the array `errors` (when it is one) as a webhook error.
inline void read_errors(const rapidjson::Value* errors, std::vector<GraphError>& out) {
  if (errors == nullptr || !errors->IsArray()) return;
  for (const rapidjson::Value& error : errors->GetArray()) {
    if (error.IsObject()) out.push_back(graph_error(error, 0));
  }
}

}  // namespace dispatchd::whatsapp::detail
