#include "connectors/whatsapp/signature.h"

#include <array>
#include <cstddef>
#include <optional>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/text.h"
#include "connectors/whatsapp/internal/detail.h"

namespace dispatchd::whatsapp {
namespace {

constexpr std::size_t k_digest_size = 32;
constexpr std::string_view k_prefix = "sha256=";
using Digest = std::array<unsigned char, k_digest_size>;

Digest hmac_sha256(std::string_view body, std::string_view secret) {
  Digest digest{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), digest.data(), &length);
  return digest;
}

std::optional<Digest> decode_hex(std::string_view hex) {
  if (hex.size() != 2 * k_digest_size) return std::nullopt;
  Digest out{};
  for (std::size_t i = 0; i < k_digest_size; ++i) {
    const int hi = detail::hex_digit(hex[2 * i]);
    const int lo = detail::hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return out;
}

std::string_view bytes_of(const Digest& digest) {
  return {reinterpret_cast<const char*>(digest.data()), digest.size()};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

const char* to_string(SignatureError error) {
  switch (error) {
    case SignatureError::no_secret: return "no app secret configured";
    case SignatureError::missing: return "missing X-Hub-Signature-256 header";
    case SignatureError::malformed: return "malformed X-Hub-Signature-256 header (expected sha256=<64 hex digits>)";
    case SignatureError::mismatch: return "signature does not match the body";
  }
  return "signature error";
}

std::expected<void, SignatureError> verify_signature(std::string_view raw_body, std::string_view header_value,
                                                     std::string_view app_secret) {
  if (app_secret.empty()) return std::unexpected(SignatureError::no_secret);
  const std::string_view value = trim(header_value);
  if (value.empty()) return std::unexpected(SignatureError::missing);
  if (!value.starts_with(k_prefix)) return std::unexpected(SignatureError::malformed);
  const auto received = decode_hex(value.substr(k_prefix.size()));
  if (!received) return std::unexpected(SignatureError::malformed);
  const Digest expected = hmac_sha256(raw_body, app_secret);
  if (!text::constant_time_equal(bytes_of(expected), bytes_of(*received))) {
    return std::unexpected(SignatureError::mismatch);
  }
  return {};
}

std::string sign_body(std::string_view raw_body, std::string_view app_secret) {
  const Digest digest = hmac_sha256(raw_body, app_secret);
  return std::string(k_prefix) + text::hex(digest);
}

}  // namespace dispatchd::whatsapp
