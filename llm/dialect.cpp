#include "llm/internal/dialect.h"

#include <algorithm>

#include "common/strict_json.h"
#include "common/text.h"

namespace dispatchd::llm::detail {

void write_message(JsonOut& out, std::string_view role, std::string_view content) {
  out.begin_object().field("role", role).field("content", content).end_object();
}

void write_chat_turns(JsonOut& out, const std::vector<Turn>& turns) {
  for (const Turn& turn : turns) write_message(out, turn.role == Role::user ? "user" : "assistant", turn.text);
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

std::string quoted(std::string_view value) { return text::quote(value, 200); }

std::int64_t token_count(json::Lookup holder, std::string_view name) {
  return std::max<std::int64_t>(0, json::int_member(holder, name).value_or(0));
}

std::pair<std::int64_t, std::int64_t> split_part(std::int64_t total, std::int64_t part) {
  const std::int64_t clamped = std::clamp<std::int64_t>(part, 0, total);
  return {total - clamped, clamped};
}

}  // namespace dispatchd::llm::detail
