// Gmail's messages.get?format=raw response (connectors/gmail/raw_message.h).
#include "connectors/gmail/raw_message.h"

#include <charconv>

#include "common/json_access.h"
#include "common/strict_json.h"
#include "connectors/gmail/base64url.h"

namespace dispatchd::gmail {
namespace {

constexpr std::size_t k_max_raw_response_bytes = 64u << 20;  // 35 MiB of mail as base64url, and the rest

std::optional<std::int64_t> internal_date(const rapidjson::Value& doc) {
  if (const auto number = json::int_member(doc, "internalDate")) return number;
  const auto text = json::string_member(doc, "internalDate");
  if (!text) return std::nullopt;
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return value;
}

}  // namespace

std::expected<RawMessage, std::string> parse_raw_response(std::string_view json_text) {
  if (json_text.size() > k_max_raw_response_bytes) return std::unexpected("messages.get response over 64 MiB");
  try {
    auto parsed = json::parse_strict(json_text, json::ParseLimits{.max_depth = 8});
    if (!parsed) return std::unexpected("messages.get response is not JSON: " + parsed.error().message);
    const rapidjson::Value& doc = parsed->document;
    if (!doc.IsObject()) return std::unexpected(std::string("messages.get response is not an object"));
    const auto raw = json::string_member(doc, "raw");
    if (!raw) return std::unexpected(std::string("messages.get response has no \"raw\" string (format=raw?)"));
    auto bytes = base64url_decode(*raw);
    if (!bytes) return std::unexpected(std::string("messages.get \"raw\" is not base64url"));
    RawMessage out;
    out.id = json::string_member(doc, "id").value_or("");
    out.thread_id = json::string_member(doc, "threadId").value_or("");
    out.history_id = json::string_member(doc, "historyId").value_or("");
    out.internal_date_ms = internal_date(doc).value_or(0);
    if (const auto* labels = json::array_member(doc, "labelIds"))
      for (const auto& label : labels->GetArray())
        if (label.IsString()) out.label_ids.emplace_back(json::string_of(label));
    out.bytes = std::move(*bytes);
    return out;
  } catch (const std::exception& e) {
    return std::unexpected(std::string("messages.get response: ") + e.what());
  }
}

}  // namespace dispatchd::gmail
