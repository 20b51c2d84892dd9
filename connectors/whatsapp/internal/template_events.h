#pragma once
#ifndef DISPATCHD_INTERNAL_CONNECTORS
#error "connectors/whatsapp/internal/ is private to connectors/: include the module's public headers instead"
#endif
// The value of one template webhook change, for webhook.cpp (an internal header: it exposes
// RapidJSON). The shapes are in connectors/whatsapp/templates.h.

#include <expected>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "connectors/whatsapp/templates.h"

namespace dispatchd::whatsapp::detail {

constexpr std::string_view k_template_status_field = "message_template_status_update";
constexpr std::string_view k_template_category_field = "template_category_update";

// Reads `value` of a change whose field is one of the two above; the reason it cannot (a
// missing name or language, a status event without "event", a category change without
// "new_category").
[[nodiscard]] std::expected<TemplateEvent, std::string> read_template_change(const rapidjson::Value& value,
                                                                             std::string_view field,
                                                                             std::string waba_id);

}  // namespace dispatchd::whatsapp::detail
