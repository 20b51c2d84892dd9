#pragma once
#ifndef DISPATCHD_INTERNAL_CONNECTORS
#error "connectors/whatsapp/internal/ is private to connectors/: include the module's public headers instead"
#endif
// Graph error objects, read for the WhatsApp connector's .cpp files (an internal header: it
// exposes RapidJSON). Members are read with common/json_access.h, which tolerates missing
// members and values of the wrong type.

#include <vector>

#include <rapidjson/document.h>

#include "common/json_access.h"
#include "connectors/whatsapp/errors.h"

namespace dispatchd::whatsapp::detail {

// A Graph error object: the `error` of a failed API response or an element of a webhook's
// errors[] (code, title, message, error_subcode, type, fbtrace_id, error_data.details).
inline GraphError graph_error(const rapidjson::Value& object, int http_status) {
  GraphError error;
  error.http_status = http_status;
  error.code = json::int_member(object, "code");
  error.subcode = json::int_member(object, "error_subcode");
  error.type = json::string_of(json::member(object, "type"));
  error.title = json::string_of(json::member(object, "title"));
  error.message = json::string_of(json::member(object, "message"));
  error.details = json::string_of(json::member(json::member(object, "error_data"), "details"));
  error.fbtrace_id = json::string_of(json::member(object, "fbtrace_id"));
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
