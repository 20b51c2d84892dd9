#include "llm/internal/dialect.h"

#include <algorithm>

#include "common/strict_json.h"
#include "common/text.h"

namespace dispatchd::llm::detail {

void write_message(JsonOut& out, std::string_view role, std::string_view content) {
  out.begin_object().field("role", role).field("content", content).end_object();
}

void write_chat_turns(JsonOut& out, const std::vector<Turn>& turns, ContentWriter with_files) {
  for (const Turn& turn : turns) {
    const std::string_view role = turn.role == Role::user ? "user" : "assistant";
    if (turn.files.empty()) {
      write_message(out, role, turn.text);
      continue;
    }
    out.begin_object().field("role", role);
    with_files(out, turn);
    out.end_object();
  }
}

std::string base64(std::string_view bytes) {
  static constexpr std::string_view k_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve(4 * ((bytes.size() + 2) / 3));
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t n = (std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                            (std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
                            std::uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    out += k_alphabet[(n >> 18) & 63];
    out += k_alphabet[(n >> 12) & 63];
    out += k_alphabet[(n >> 6) & 63];
    out += k_alphabet[n & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    std::uint32_t n = std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16;
    if (rest == 2) n |= std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8;
    out += k_alphabet[(n >> 18) & 63];
    out += k_alphabet[(n >> 12) & 63];
    out += rest == 2 ? k_alphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
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
