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
    if (const int mask = _mm_movemask_epi8(chunk))
      return i + static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(mask)));
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

// Byte by byte: exact about where the text goes wrong, but a branch per character.
std::optional<std::size_t> first_invalid_bytewise(std::string_view text) {
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

#if defined(__SSE2__)
// Unsigned byte comparisons against a constant, lane by lane (all-ones where true).
__m128i at_least(__m128i bytes, unsigned char min) {
  return _mm_cmpeq_epi8(_mm_max_epu8(bytes, _mm_set1_epi8(static_cast<char>(min))), bytes);
}
__m128i at_most(__m128i bytes, unsigned char max) {
  return _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(static_cast<char>(max))), bytes);
}
__m128i equal(__m128i bytes, unsigned char value) {
  return _mm_cmpeq_epi8(bytes, _mm_set1_epi8(static_cast<char>(value)));
}

// The lanes of `chunk` that break UTF-8, given the sixteen bytes before it in `previous`.
// Every byte is checked against the bytes up to three before it, with no branch, which is
// what makes text that mixes scripts fast: the byte-wise loop mispredicts on every change
// of sequence length.
__m128i errors_in(__m128i chunk, __m128i previous) {
  // The bytes one, two and three places back, across the chunk boundary.
  const __m128i back1 = _mm_or_si128(_mm_slli_si128(chunk, 1), _mm_srli_si128(previous, 15));
  const __m128i back2 = _mm_or_si128(_mm_slli_si128(chunk, 2), _mm_srli_si128(previous, 14));
  const __m128i back3 = _mm_or_si128(_mm_slli_si128(chunk, 3), _mm_srli_si128(previous, 13));
  // Continuation bytes (80..BF) exactly where a lead byte before them needs one: C0.. leads
  // need the next byte, E0.. the next two, F0.. the next three.
  const __m128i continuation = equal(_mm_and_si128(chunk, _mm_set1_epi8(static_cast<char>(0xC0))), 0x80);
  const __m128i needed =
      _mm_or_si128(_mm_or_si128(at_least(back1, 0xC0), at_least(back2, 0xE0)), at_least(back3, 0xF0));
  __m128i errors = _mm_xor_si128(continuation, needed);
  // Bytes that never occur: C0 and C1 (overlong two-byte forms), F5..FF.
  errors = _mm_or_si128(errors, equal(_mm_and_si128(chunk, _mm_set1_epi8(static_cast<char>(0xFE))), 0xC0));
  errors = _mm_or_si128(errors, at_least(chunk, 0xF5));
  // Second bytes with a narrower range than 80..BF: overlong forms, surrogates, and code
  // points past U+10FFFF.
  errors = _mm_or_si128(errors, _mm_and_si128(equal(back1, 0xE0), at_most(chunk, 0x9F)));
  errors = _mm_or_si128(errors, _mm_and_si128(equal(back1, 0xED), at_least(chunk, 0xA0)));
  errors = _mm_or_si128(errors, _mm_and_si128(equal(back1, 0xF0), at_most(chunk, 0x8F)));
  errors = _mm_or_si128(errors, _mm_and_si128(equal(back1, 0xF4), at_least(chunk, 0x90)));
  return errors;
}

// Whether the chunk ends inside a sequence: a lead byte in one of its last three lanes
// that needs more bytes than the chunk has left.
bool ends_inside_sequence(__m128i chunk) {
  const __m128i needs_more = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, static_cast<char>(0xF0),
                                           static_cast<char>(0xE0), static_cast<char>(0xC0));
  return _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(chunk, needs_more), chunk)) != 0;
}

bool is_valid_sse2(std::string_view text) {
  const std::size_t size = text.size();
  __m128i previous = _mm_setzero_si128();
  __m128i errors = _mm_setzero_si128();
  bool inside_sequence = false;
  const auto check = [&](__m128i chunk) {
    errors = _mm_or_si128(errors, errors_in(chunk, previous));
    inside_sequence = ends_inside_sequence(chunk);
    previous = chunk;
  };
  std::size_t i = 0;
  for (; i + 16 <= size; i += 16) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    if (!inside_sequence && _mm_movemask_epi8(chunk) == 0) {  // ASCII, and nothing pending
      previous = chunk;
      continue;
    }
    check(chunk);
  }
  if (i < size) {  // the tail, padded with NUL bytes (ASCII: a sequence cut short shows)
    alignas(16) char tail[16] = {};
    std::memcpy(tail, text.data() + i, size - i);
    check(_mm_load_si128(reinterpret_cast<const __m128i*>(tail)));
  }
  return _mm_movemask_epi8(errors) == 0 && !inside_sequence;
}
#endif

}  // namespace

std::optional<std::size_t> first_invalid(std::string_view text) {
#if defined(__SSE2__)
  // The vector check decides; the byte-wise loop only says where invalid text goes wrong.
  if (is_valid_sse2(text)) return std::nullopt;
#endif
  return first_invalid_bytewise(text);
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
