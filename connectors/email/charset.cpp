// Charset conversion for body text with GMime's iconv filter, and repairs of encoded words.
#include <gmime/gmime.h>

#include <iconv.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/utf8.h"
#include "connectors/email/internal/charset.h"
#include "connectors/email/internal/text.h"

namespace dispatchd::email::detail {
namespace {

struct Unref {
  void operator()(gpointer object) const { g_object_unref(object); }
};
template <typename T>
using Ref = std::unique_ptr<T, Unref>;

// A declared charset quoted in a defect: short, valid UTF-8.
std::string excerpt(const char* value) {
  std::size_t replaced = 0;
  return std::string(utf8::prefix(valid_utf8(value ? value : "", replaced), 40));
}

// Labels mail declares for which a superset decodes what senders really wrote (as browsers
// do, WHATWG Encoding): GB2312 mail often holds GBK characters, EUC-KR mail UHC ones.
const char* superset_charset(const std::string& label) {
  static constexpr std::pair<const char*, const char*> k_supersets[] = {
      {"gb2312", "GB18030"},      {"gbk", "GB18030"},  {"x-gbk", "GB18030"},
      {"euc-cn", "GB18030"},      {"euc-kr", "CP949"}, {"ks_c_5601-1987", "CP949"},
      {"shift_jis", "CP932"},     {"x-sjis", "CP932"}, {"iso-8859-1", "windows-1252"},
      {"latin1", "windows-1252"},
  };
  for (const auto& [from, to] : k_supersets)
    if (label == from) return to;
  return nullptr;
}

// Keeps one converter from `charset` (one iconv knows) open for the life of the process. glibc
// unloads a gconv module (dlclose) soon after its last converter closes and GMime's iconv cache
// closes them, so mail alternating between charsets paid a dlopen + dlclose (mmap, munmap,
// relocations) per message: two thirds of the decode time on the test corpus
// (bench/README.md, "Mail decode"). Bounded: at most k_max_pinned charsets, never closed.
void pin_charset(const char* charset) {
  constexpr std::size_t k_max_pinned = 64;
  static std::mutex mutex;
  // Reachable from here and never freed (converters included), so not a leak to LeakSanitizer.
  static auto* pinned = new std::vector<std::pair<std::string, iconv_t>>();
  std::string label = lower_ascii(charset);
  const std::lock_guard lock(mutex);
  if (pinned->size() >= k_max_pinned ||
      std::any_of(pinned->begin(), pinned->end(), [&](const auto& pin) { return pin.first == label; }))
    return;
  const iconv_t converter = iconv_open("UTF-8", charset);
  if (converter == reinterpret_cast<iconv_t>(-1)) return;
  pinned->emplace_back(std::move(label), converter);
}

// `bytes` converted from `charset` to UTF-8 by GMime's iconv filter; nullopt when iconv
// does not know the charset.
std::optional<std::string> convert(std::string_view bytes, const char* charset) {
  GMimeFilter* raw_filter = g_mime_filter_charset_new(charset, "UTF-8");
  if (!raw_filter) return std::nullopt;
  Ref<GMimeFilter> filter(raw_filter);
  pin_charset(charset);
  Ref<GMimeStream> mem(g_mime_stream_mem_new());
  Ref<GMimeStream> filtered(g_mime_stream_filter_new(mem.get()));
  g_mime_stream_filter_add(GMIME_STREAM_FILTER(filtered.get()), filter.get());
  if (g_mime_stream_write(filtered.get(), bytes.data(), bytes.size()) < 0 || g_mime_stream_flush(filtered.get()) < 0)
    return std::nullopt;
  GByteArray* array = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem.get()));
  return std::string(reinterpret_cast<const char*>(array->data), array->len);
}

}  // namespace

std::string text_to_utf8(std::string_view bytes, const char* declared, std::vector<std::string>& defects) {
  const std::string label = lower_ascii(declared ? trim_space(declared) : "");
  std::string converted;
  if (label.empty() || label == "us-ascii" || label == "ascii" || label == "utf-8" || label == "utf8") {
    if (utf8::is_valid(bytes)) return std::string(bytes);
    if (label == "utf-8" || label == "utf8") {
      defects.push_back("invalid UTF-8 in body");
    } else if (auto western = convert(bytes, "windows-1252")) {
      // Undeclared 8-bit text is most often Western European.
      return *western;
    }
    converted = std::string(bytes);
  } else {
    const char* superset = superset_charset(label);
    auto result = convert(bytes, superset ? superset : declared);
    if (!result && superset) result = convert(bytes, declared);
    if (result) {
      converted = std::move(*result);
    } else {
      defects.push_back("unknown charset " + excerpt(declared));
      converted = std::string(bytes);
    }
  }
  std::size_t replaced = 0;
  std::string valid = detail::valid_utf8(converted, replaced);
  if (replaced > 0 && !(label == "utf-8" || label == "utf8"))
    defects.push_back("invalid bytes in charset " + excerpt(declared));
  return valid;
}

std::optional<std::string> repadded_encoded_words(std::string_view raw) {
  std::string out;
  bool changed = false;
  std::size_t pos = 0;
  while (pos < raw.size()) {
    const std::size_t start = raw.find("=?", pos);
    const std::size_t q = start == std::string_view::npos ? start : raw.find('?', start + 2);
    const std::size_t end = q == std::string_view::npos || q + 3 > raw.size() ? q : raw.find("?=", q + 3);
    if (end == std::string_view::npos) break;
    out.append(raw.substr(pos, end - pos));
    const std::size_t length = end - (q + 3);
    if ((raw[q + 1] == 'B' || raw[q + 1] == 'b') && raw[q + 2] == '?' && length % 4 >= 2) {
      out.append(4 - length % 4, '=');
      changed = true;
    }
    out.append("?=");
    pos = end + 2;
  }
  if (!changed) return std::nullopt;
  out.append(raw.substr(std::min(pos, raw.size())));
  std::erase_if(out, [](char c) { return c == '\r' || c == '\n'; });  // unfolded
  return out;
}

}  // namespace dispatchd::email::detail
