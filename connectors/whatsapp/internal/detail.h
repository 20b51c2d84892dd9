#pragma once
#ifndef DISPATCHD_INTERNAL_CONNECTORS
#error "connectors/whatsapp/internal/ is private to connectors/: include the module's public headers instead"
#endif
// Small helpers shared by the WhatsApp connector's .cpp files; not part of its interface.

#include <string_view>

#include <openssl/crypto.h>

namespace dispatchd::whatsapp::detail {

// The value of one hex digit (either case), or -1.
inline int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Equal length and equal bytes, without an early exit on the first differing byte.
inline bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace dispatchd::whatsapp::detail
