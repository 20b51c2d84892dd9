#include "common/utf8.h"

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace dispatchd::utf8 {
namespace {

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the sequence led by `lead`, or 0 for a byte that cannot lead one.
std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Where the ASCII run starting at `i` ends: the first index at or after `i` whose byte has
// its high bit set, or `size`.
std::size_t ascii_run_end(const unsigned char* bytes, std::size_t i, std::size_t size) {
#if defined(__SSE2__)
  // Sixteen bytes per step; the movemask also says where in the chunk the run stops, so
  // text that mixes ASCII and other scripts does not fall back to single bytes.
  while (i + 16 <= size) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + i));
    if (const int mask = _mm_movemask_epi8(chunk)) return i + static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(mask)));
    i += 16;
  }
#else
  while (i + 8 <= size) {
    std::uint64_t word;
    std::memcpy(&word, bytes + i, sizeof word);
    if (word & 0x8080808080808080ull) break;
    i += 8;
  }
#endif
  while (i < size && bytes[i] < 0x80) ++i;
  return i;
}

}  // namespace

std::optional<std::size_t> first_invalid(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    const unsigned char lead = bytes[i];
    if (lead < 0x80) {
      i = ascii_run_end(bytes, i + 1, size);
      continue;
    }
    const std::size_t length = sequence_length(lead);
    if (length == 0 || i + length > size) return i;
    for (std::size_t k = 1; k < length; ++k) {
      if (!is_continuation(bytes[i + k])) return i;
    }
    if (length >= 3) {
      const unsigned char second = bytes[i + 1];
      // Overlong forms, surrogates and values past U+10FFFF are all decided by the
      // second byte given the lead.
      if (lead == 0xE0 && second < 0xA0) return i;
      if (lead == 0xED && second >= 0xA0) return i;
      if (lead == 0xF0 && second < 0x90) return i;
      if (lead == 0xF4 && second >= 0x90) return i;
    }
    i += length;
  }
  return std::nullopt;
}

bool has_encoded_surrogate(std::string_view text) {
  for (std::size_t i = text.find('\xED'); i != std::string_view::npos; i = text.find('\xED', i + 1)) {
    if (i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0xA0) return true;
  }
  return false;
}

std::size_t code_points(std::string_view text) {
  std::size_t count = 0;
  for (const char c : text) {
    if (!is_continuation(static_cast<unsigned char>(c))) ++count;
  }
  return count;
}

std::string_view prefix(std::string_view text, std::size_t max_points) {
  std::size_t points = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_continuation(static_cast<unsigned char>(text[i]))) continue;
    if (points == max_points) return text.substr(0, i);
    ++points;
  }
  return text;
}

}  // namespace dispatchd::utf8
