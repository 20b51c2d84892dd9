#include "connectors/whatsapp/media_info.h"

#include <charconv>

#include "common/json_access.h"
#include "common/strict_json.h"
#include "common/text.h"
#include "connectors/whatsapp/internal/detail.h"

namespace dispatchd::whatsapp {
namespace {

constexpr std::size_t k_media_info_max_bytes = 64 * 1024;
constexpr std::size_t k_media_info_max_depth = 32;
constexpr std::size_t k_sha256_hex_digits = 64;
constexpr std::size_t k_max_size_digits = 18;  // any 18 digits fit an int64

std::unexpected<MediaInfoError> media_info_error(MediaInfoErrorCode code, std::string message) {
  return std::unexpected(MediaInfoError{.code = code, .message = std::move(message)});
}

std::unexpected<MediaInfoError> shape_error(std::string_view member, std::string_view what) {
  return media_info_error(MediaInfoErrorCode::wrong_shape,
                          "the media answer's " + std::string(member) + " " + std::string(what));
}

// A member that must be a non-empty string.
std::expected<std::string, MediaInfoError> required_text(const rapidjson::Value& root, std::string_view name) {
  const rapidjson::Value* value = json::member(root, name);
  if (value == nullptr) return shape_error(name, "is missing");
  if (!value->IsString()) return shape_error(name, std::string("is a ") + json::type_name(*value) + ", not a string");
  if (value->GetStringLength() == 0) return shape_error(name, "is empty");
  return std::string(value->GetString(), value->GetStringLength());
}

std::expected<std::string, MediaInfoError> sha256_of(const rapidjson::Value& root) {
  auto hash = required_text(root, "sha256");
  if (!hash) return hash;
  bool hex = hash->size() == k_sha256_hex_digits;
  for (char& c : *hash) {
    hex = hex && detail::hex_digit(c) >= 0;
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  if (!hex) return shape_error("sha256", "is not 64 hex digits: " + text::quote(*hash, 70));
  return hash;
}

std::expected<std::optional<std::int64_t>, MediaInfoError> file_size_of(const rapidjson::Value& root) {
  const rapidjson::Value* value = json::member(root, "file_size");
  if (value == nullptr || value->IsNull()) return std::nullopt;
  if (value->IsInt64() && value->GetInt64() >= 0) return value->GetInt64();
  if (!value->IsString()) return shape_error("file_size", "is not a size in bytes");
  const std::string_view digits(value->GetString(), value->GetStringLength());
  std::int64_t size = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), size);
  if (digits.empty() || digits.size() > k_max_size_digits || digits.front() == '-' || error != std::errc{} ||
      end != digits.data() + digits.size()) {
    return shape_error("file_size", "is not a string of digits: " + text::quote(digits));
  }
  return size;
}

// A URL's scheme, host and port, for comparing origins.
struct UrlOrigin {
  std::string scheme;  // "http" or "https"
  std::string host;    // lower-case
  int port = 0;        // 0: none written
};

std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

bool ipv6_char(char c) { return detail::hex_digit(c) >= 0 || c == ':' || c == '.'; }

// 1 to 65535 in decimal without a leading zero, or 0 when it is not. One spelling per port,
// so that comparing origins never depends on how another parser reads "08089".
int port_number(std::string_view digits) {
  int port = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (digits.empty() || digits.size() > 5 || digits.front() < '1' || digits.front() > '9' || error != std::errc{} ||
      end != digits.data() + digits.size() || port > 65535) {
    return 0;
  }
  return port;
}

// The origin of an absolute http(s) URL, or nullopt when the URL is one may_send_token_to
// refuses whatever its scheme (media_info.h lists them).
std::optional<UrlOrigin> origin_of(std::string_view url) {
  for (const char c : url) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= ' ' || byte > '~' || c == '\\') return std::nullopt;
  }
  const std::size_t separator = url.find("://");
  if (separator == std::string_view::npos) return std::nullopt;
  UrlOrigin origin{.scheme = lowered(url.substr(0, separator))};
  if (origin.scheme != "http" && origin.scheme != "https") return std::nullopt;
  const std::string_view rest = url.substr(separator + 3);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string_view::npos) return std::nullopt;
  std::string_view host = authority;
  std::string_view after_host;
  if (authority.starts_with('[')) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos || close == 1) return std::nullopt;
    for (const char c : authority.substr(1, close - 1)) {
      if (!ipv6_char(c)) return std::nullopt;
    }
    host = authority.substr(0, close + 1);
    after_host = authority.substr(close + 1);
  } else {
    host = authority.substr(0, authority.find(':'));
    after_host = authority.substr(host.size());
    if (host.empty()) return std::nullopt;
    for (const char c : host) {
      if (!host_char(c)) return std::nullopt;
    }
  }
  if (!after_host.empty()) {
    if (!after_host.starts_with(':')) return std::nullopt;
    origin.port = port_number(after_host.substr(1));
    if (origin.port == 0) return std::nullopt;
  }
  origin.host = lowered(host);
  return origin;
}

}  // namespace

bool may_send_token_to(std::string_view url, std::string_view graph_base_url) {
  const std::optional<UrlOrigin> target = origin_of(url);
  if (!target) return false;
  if (target->scheme == "https") return true;
  // Plain http only to the Graph API's own origin: the operator chose it (a test's fake).
  const std::optional<UrlOrigin> graph = origin_of(graph_base_url);
  return graph && graph->scheme == target->scheme && graph->host == target->host && graph->port == target->port;
}

std::expected<MediaInfo, MediaInfoError> parse_media_info(std::string_view body, std::string_view graph_base_url) {
  if (body.size() > k_media_info_max_bytes) {
    return media_info_error(MediaInfoErrorCode::too_large, "the media answer of " + std::to_string(body.size()) +
                                                               " bytes is over the " +
                                                               std::to_string(k_media_info_max_bytes) + "-byte limit");
  }
  auto parsed = json::parse_strict(body, {.max_depth = k_media_info_max_depth});
  if (!parsed) {
    return media_info_error(MediaInfoErrorCode::not_json, "the media answer is not JSON: " + parsed.error().message +
                                                              " at byte " + std::to_string(parsed.error().offset));
  }
  const rapidjson::Value& root = parsed->document;
  if (!root.IsObject()) return shape_error("body", std::string("is a ") + json::type_name(root) + ", not an object");
  if (const rapidjson::Value* product = json::member(root, "messaging_product");
      product != nullptr && json::string_of(product) != "whatsapp") {
    return shape_error("messaging_product", "is not \"whatsapp\"");
  }
  auto url = required_text(root, "url");
  if (!url) return std::unexpected(url.error());
  auto mime_type = required_text(root, "mime_type");
  if (!mime_type) return std::unexpected(mime_type.error());
  auto sha256 = sha256_of(root);
  if (!sha256) return std::unexpected(sha256.error());
  auto file_size = file_size_of(root);
  if (!file_size) return std::unexpected(file_size.error());
  auto id = required_text(root, "id");
  if (!id) return std::unexpected(id.error());
  if (!may_send_token_to(*url, graph_base_url)) {
    return media_info_error(MediaInfoErrorCode::bad_url, "the media answer's url " + text::quote(*url, 80) +
                                                             " is not one the access token may go to");
  }
  return MediaInfo{.url = std::move(*url),
                   .mime_type = std::move(*mime_type),
                   .sha256 = std::move(*sha256),
                   .file_size = *file_size,
                   .id = std::move(*id)};
}

}  // namespace dispatchd::whatsapp
