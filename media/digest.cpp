#include "media/digest.h"

#include <openssl/evp.h>

#include <array>
#include <span>

#include "common/text.h"

namespace dispatchd::media {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  Impl() { EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr); }
  ~Impl() { EVP_MD_CTX_free(ctx); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
};

Sha256::Sha256() : m_impl(std::make_unique<Impl>()) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::string_view bytes) { EVP_DigestUpdate(m_impl->ctx, bytes.data(), bytes.size()); }

std::string Sha256::hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(m_impl->ctx, digest.data(), &size);
  EVP_DigestInit_ex(m_impl->ctx, EVP_sha256(), nullptr);
  return text::hex(std::span<const unsigned char>(digest.data(), size));
}

std::optional<std::string> sha256_hex(std::string_view declared) {
  if (declared.size() == 64) {
    std::string out;
    for (const char c : declared) {
      if (text::hex_value(c) < 0) return std::nullopt;
      out += static_cast<char>(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
    }
    return out;
  }
  // 32 bytes in standard base64: 43 digits and one '=' of padding, which EVP_DecodeBlock
  // decodes to 33 bytes, the last one the padding's zero.
  if (declared.size() != 44 || !declared.ends_with('=') || declared.ends_with("==")) return std::nullopt;
  std::array<unsigned char, 33> bytes{};
  const int size = EVP_DecodeBlock(bytes.data(), reinterpret_cast<const unsigned char*>(declared.data()), 44);
  if (size != 33 || bytes[32] != 0) return std::nullopt;
  return text::hex(std::span<const unsigned char>(bytes.data(), 32));
}

}  // namespace dispatchd::media
