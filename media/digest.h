#pragma once
// SHA-256 over bytes that arrive in pieces (a download streamed to the store): the digest a
// kept file is addressed by, and compared with the one its channel declared.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace dispatchd::media {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void update(std::string_view bytes);
  // The digest of everything updated so far, 64 lower-case hex digits. Ends the hashing:
  // further updates start over from nothing.
  std::string hex();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// A declared sha256 as the store keeps it, lower-case hex: 64 hex digits in either case, or
// the 32 bytes in base64 (44 characters with its padding, as some WhatsApp payloads send it).
// nullopt for anything else (then nothing was declared that can be checked).
std::optional<std::string> sha256_hex(std::string_view declared);

}  // namespace dispatchd::media
