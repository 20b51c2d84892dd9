#include "media/policy.h"

#include <algorithm>
#include <iterator>

namespace dispatchd::media {
namespace {

using namespace std::string_view_literals;

// RFC 9110's tchar: what a type or subtype may be made of.
bool is_token_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return "!#$%&'*+-.^_`|~"sv.find(c) != std::string_view::npos;
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

struct Rename {
  std::string_view from;
  std::string_view to;
};

// Other names of one format, as senders and mail clients write them.
constexpr Rename k_aliases[] = {
    {"image/jpg"sv, "image/jpeg"sv},
    {"image/pjpeg"sv, "image/jpeg"sv},
    {"image/x-png"sv, "image/png"sv},
    {"image/x-ms-bmp"sv, "image/bmp"sv},
    {"image/x-bmp"sv, "image/bmp"sv},
    {"image/vnd.microsoft.icon"sv, "image/x-icon"sv},
    {"image/ico"sv, "image/x-icon"sv},
    {"audio/mp3"sv, "audio/mpeg"sv},
    {"audio/mpeg3"sv, "audio/mpeg"sv},
    {"audio/x-mpeg"sv, "audio/mpeg"sv},
    {"audio/x-mp3"sv, "audio/mpeg"sv},
    {"audio/x-m4a"sv, "audio/mp4"sv},
    {"audio/m4a"sv, "audio/mp4"sv},
    {"audio/opus"sv, "audio/ogg"sv},  // WhatsApp's voice notes: Opus in Ogg
    {"application/ogg"sv, "audio/ogg"sv},
    {"audio/x-ogg"sv, "audio/ogg"sv},
    {"audio/x-wav"sv, "audio/wav"sv},
    {"audio/wave"sv, "audio/wav"sv},
    {"audio/vnd.wave"sv, "audio/wav"sv},
    {"audio/x-aac"sv, "audio/aac"sv},
    {"audio/aacp"sv, "audio/aac"sv},
    {"audio/x-aiff"sv, "audio/aiff"sv},
    {"audio/x-midi"sv, "audio/midi"sv},
    {"video/x-msvideo"sv, "video/avi"sv},
    {"application/x-pdf"sv, "application/pdf"sv},
    {"application/x-zip-compressed"sv, "application/zip"sv},
    {"application/x-zip"sv, "application/zip"sv},
    {"application/gzip"sv, "application/x-gzip"sv},
    {"application/vnd.rar"sv, "application/x-rar-compressed"sv},
    {"text/xml"sv, "application/xml"sv},
    {"application/xhtml+xml"sv, "text/html"sv},  // sniff() calls an XHTML root text/html
};

// Formats whose bytes look the same as another's: the container the bytes show.
constexpr Rename k_containers[] = {
    {"audio/mp4"sv, "video/mp4"sv}, {"video/quicktime"sv, "video/mp4"sv}, {"audio/webm"sv, "video/webm"sv},
    {"video/ogg"sv, "audio/ogg"sv}, {"audio/3gpp"sv, "video/3gpp"sv},
};

template <std::size_t N>
std::string_view renamed(std::string_view type, const Rename (&table)[N]) {
  const auto* found =
      std::find_if(std::begin(table), std::end(table), [type](const Rename& r) { return r.from == type; });
  return found == std::end(table) ? type : found->to;
}

// `essence` with the aliases of one format applied.
std::string_view canonical(std::string_view essence) { return renamed(essence, k_aliases); }

std::string_view container(std::string_view canonical_type) { return renamed(canonical_type, k_containers); }

// A declared format that is a zip or an XML document underneath, when the bytes show that.
bool built_on(std::string_view declared, std::string_view sniffed) {
  if (sniffed == "application/zip") {
    return declared.ends_with("+zip") || declared.starts_with("application/vnd.openxmlformats-officedocument.") ||
           declared.starts_with("application/vnd.oasis.opendocument.");
  }
  if (sniffed == "application/xml") return declared.ends_with("+xml");
  return false;
}

constexpr std::string_view k_inline_images[] = {"image/jpeg"sv, "image/png"sv, "image/gif"sv, "image/webp"sv,
                                                "image/bmp"sv};
constexpr std::string_view k_inline_audio[] = {"audio/ogg"sv, "audio/mpeg"sv, "audio/mp4"sv, "audio/aac"sv,
                                               "audio/amr"sv, "audio/wav"sv,  "audio/webm"sv};

template <std::size_t N>
bool listed(std::string_view type, const std::string_view (&list)[N]) {
  return std::find(std::begin(list), std::end(list), type) != std::end(list);
}

}  // namespace

std::string essence(std::string_view content_type) {
  if (const std::size_t semicolon = content_type.find(';'); semicolon != std::string_view::npos) {
    content_type = content_type.substr(0, semicolon);
  }
  while (!content_type.empty() && is_blank(content_type.front())) content_type.remove_prefix(1);
  while (!content_type.empty() && is_blank(content_type.back())) content_type.remove_suffix(1);
  const std::size_t slash = content_type.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == content_type.size()) return {};
  std::string out;
  out.reserve(content_type.size());
  for (std::size_t i = 0; i < content_type.size(); ++i) {
    const char c = content_type[i];
    if (i != slash && !is_token_char(c)) return {};
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

TypeMatch compare(std::string_view declared, std::string_view sniffed) {
  const std::string sniffed_essence = essence(sniffed);
  const std::string declared_essence = essence(declared);
  if (sniffed_essence.empty() || declared_essence.empty() || declared_essence == "application/octet-stream") {
    return TypeMatch::unknown;
  }
  const std::string_view d = canonical(declared_essence);
  const std::string_view s = canonical(sniffed_essence);
  return container(d) == container(s) || built_on(d, s) ? TypeMatch::same : TypeMatch::differs;
}

common::MediaKind kind_of(std::string_view content_type) {
  const std::string type_essence = essence(content_type);
  const std::string_view type = canonical(type_essence);
  if (type == "image/svg+xml") return common::MediaKind::document;
  if (type.starts_with("image/")) return common::MediaKind::image;
  if (type.starts_with("audio/")) return common::MediaKind::audio;
  if (type.starts_with("video/")) return common::MediaKind::video;
  return common::MediaKind::document;
}

Disposition serving(std::string_view stored_type, std::string_view sniffed_type) {
  const std::string stored_essence = essence(stored_type);
  const std::string sniffed_essence = essence(sniffed_type);
  const std::string_view stored = canonical(stored_essence);
  const std::string_view sniffed = canonical(sniffed_essence);
  if (listed(stored, k_inline_images) && listed(sniffed, k_inline_images)) return Disposition::inline_image;
  if (listed(stored, k_inline_audio) && (listed(sniffed, k_inline_audio) || container(sniffed) == container(stored))) {
    return Disposition::inline_audio;
  }
  return Disposition::attachment;
}

std::int64_t cap(const Limits& limits, common::MediaKind kind) {
  switch (kind) {
    case common::MediaKind::image: return limits.image;
    case common::MediaKind::audio: return limits.audio;
    case common::MediaKind::video: return limits.video;
    case common::MediaKind::document: return limits.document;
    case common::MediaKind::sticker: return limits.sticker;
  }
  return 0;  // not a kind: nothing fits
}

SizeVerdict admit(const Limits& limits, common::MediaKind kind, std::int64_t size, std::int64_t stored_total) {
  if (size < 0 || size > cap(limits, kind)) return SizeVerdict::over_type_cap;
  // Subtracted, not added: stored_total + size could overflow.
  if (stored_total < 0 || stored_total > limits.total || size > limits.total - stored_total) {
    return SizeVerdict::over_total;
  }
  return SizeVerdict::fits;
}

}  // namespace dispatchd::media
