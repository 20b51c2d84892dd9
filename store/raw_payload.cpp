#include "store/raw_payload.h"

#include <openssl/evp.h>

#include "common/utf8.h"

namespace dispatchd::store {

StoredPayload store_payload(std::string_view bytes) {
  if (utf8::is_valid(bytes)) return {std::string(bytes), std::nullopt};
  std::string text(4 * ((bytes.size() + 2) / 3), '\0');
  const int written =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(text.data()),
                      reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  text.resize(static_cast<std::size_t>(written));
  return {std::move(text), std::string("base64")};
}

std::optional<std::string> payload_bytes(std::string_view text, const std::optional<std::string>& encoding) {
  if (!encoding) return std::string(text);
  if (*encoding != "base64" || text.size() % 4 != 0) return std::nullopt;
  std::string bytes(text.size() / 4 * 3, '\0');
  const int decoded =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (decoded < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes.
  std::size_t size = static_cast<std::size_t>(decoded);
  if (!text.empty() && text.back() == '=') --size;
  if (text.size() > 1 && text[text.size() - 2] == '=') --size;
  bytes.resize(size);
  return bytes;
}

}  // namespace dispatchd::store
