#include "media/sniff.h"

#include <algorithm>
#include <cstdint>

namespace dispatchd::media {
namespace {

using namespace std::string_view_literals;

std::uint8_t byte_at(std::string_view s, std::size_t i) { return static_cast<std::uint8_t>(s[i]); }

// A signature at the start of a file. Where `mask` has a NUL, any byte will do (a RIFF or
// FORM chunk's length); past the mask's end, every byte must match.
struct Signature {
  std::string_view bytes;
  std::string_view mask;
  std::string_view type;
};

constexpr std::string_view k_chunk_mask = "\xFF\xFF\xFF\xFF\0\0\0\0"sv;

// The standard's image, audio and video, and archive tables, with PDF and PostScript, and the
// AMR storage format's magic (RFC 4867, section 5).
constexpr Signature k_signatures[] = {
    {"\x00\x00\x01\x00"sv, {}, "image/x-icon"sv},
    {"\x00\x00\x02\x00"sv, {}, "image/x-icon"sv},  // a cursor
    {"GIF87a"sv, {}, "image/gif"sv},
    {"GIF89a"sv, {}, "image/gif"sv},
    {"RIFF\0\0\0\0WEBPVP"sv, k_chunk_mask, "image/webp"sv},
    {"\x89PNG\r\n\x1A\n"sv, {}, "image/png"sv},
    {"\xFF\xD8\xFF"sv, {}, "image/jpeg"sv},
    {"FORM\0\0\0\0AIFF"sv, k_chunk_mask, "audio/aiff"sv},
    {"ID3"sv, {}, "audio/mpeg"sv},
    {"OggS\0"sv, {}, "audio/ogg"sv},
    {"MThd\0\0\0\x06"sv, {}, "audio/midi"sv},
    {"RIFF\0\0\0\0AVI "sv, k_chunk_mask, "video/avi"sv},
    {"RIFF\0\0\0\0WAVE"sv, k_chunk_mask, "audio/wav"sv},
    {"#!AMR\n"sv, {}, "audio/amr"sv},
    {"#!AMR-WB\n"sv, {}, "audio/amr-wb"sv},
    {"%PDF-"sv, {}, "application/pdf"sv},
    {"%!PS-Adobe-"sv, {}, "application/postscript"sv},
    {"\x1F\x8B\x08"sv, {}, "application/x-gzip"sv},
    {"PK\x03\x04"sv, {}, "application/zip"sv},
    {"Rar!\x1A\x07"sv, {}, "application/x-rar-compressed"sv},
};

bool matches(std::string_view head, const Signature& signature) {
  if (head.size() < signature.bytes.size()) return false;
  for (std::size_t i = 0; i < signature.bytes.size(); ++i) {
    const bool any = i < signature.mask.size() && signature.mask[i] == '\0';
    if (!any && head[i] != signature.bytes[i]) return false;
  }
  return true;
}

// --- markup -------------------------------------------------------------------------------

bool is_space(char c) { return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '; }

std::string_view skip_space(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

// Where a tag's name ends: the standard's tag-terminating bytes (space, `>`), with the other
// whitespace and `/` as well, so that `<html\n` and `<br/>` count.
bool ends_name(char c) { return is_space(c) || c == '>' || c == '/'; }

// The standard's HTML patterns, upper-cased there and compared without case here.
constexpr std::string_view k_html_starts[] = {
    "<!doctype html"sv, "<html"sv, "<head"sv,  "<script"sv, "<iframe"sv, "<h1"sv,   "<div"sv, "<font"sv,
    "<table"sv,         "<a"sv,    "<style"sv, "<title"sv,  "<b"sv,      "<body"sv, "<br"sv,  "<p"sv,
};

bool starts_html(std::string_view s) {
  return std::any_of(std::begin(k_html_starts), std::end(k_html_starts), [s](std::string_view tag) {
    return s.size() > tag.size() && iequals(s.substr(0, tag.size()), tag) && ends_name(s[tag.size()]);
  });
}

// The root element's local name (`svg` for `<svg:svg`), after the XML declaration, comments,
// processing instructions and a doctype; "" when the sniffed bytes end first or something
// else comes.
std::string_view root_element(std::string_view s) {
  while (true) {
    s = skip_space(s);
    std::size_t next = std::string_view::npos;
    if (s.starts_with("<?")) {
      next = s.find("?>");
      if (next != std::string_view::npos) next += 2;
    } else if (s.starts_with("<!--")) {
      next = s.find("-->", 4);
      if (next != std::string_view::npos) next += 3;
    } else if (s.starts_with("<!")) {
      // A doctype; its internal subset, in brackets, may hold `>` of its own.
      const std::size_t close = s.find('>');
      const std::size_t subset = s.find('[');
      next = subset < close ? s.find(']', subset) : close;
      if (next != std::string_view::npos) next = s.find('>', next);
      if (next != std::string_view::npos) next += 1;
    } else if (s.starts_with('<')) {
      const auto end = std::find_if(s.begin() + 1, s.end(), ends_name);
      if (end == s.end()) return {};  // the name may go on past the sniffed bytes
      std::string_view name = s.substr(1, static_cast<std::size_t>(end - s.begin()) - 1);
      if (const std::size_t colon = name.rfind(':'); colon != std::string_view::npos) name.remove_prefix(colon + 1);
      return name;
    }
    if (next == std::string_view::npos) return {};
    s.remove_prefix(next);
  }
}

// `s` starts with `<`.
std::string_view markup(std::string_view s) {
  if (starts_html(s)) return "text/html"sv;
  const std::string_view root = root_element(s);
  if (iequals(root, "svg")) return "image/svg+xml"sv;
  if (iequals(root, "html")) return "text/html"sv;
  if (s.starts_with("<?xml")) return "application/xml"sv;
  if (s.starts_with("<!--")) return "text/html"sv;
  return {};
}

// --- ISO media (MP4, 3GP, QuickTime, HEIF) --------------------------------------------------

struct Brand {
  std::string_view prefix;  // of the four-byte brand
  std::string_view type;
};

// Brands that say what a file holds; the first that a file names decides.
constexpr Brand k_specific_brands[] = {
    {"M4A "sv, "audio/mp4"sv},       {"M4B "sv, "audio/mp4"sv},  {"M4P "sv, "audio/mp4"sv},  {"3g"sv, "video/3gpp"sv},
    {"qt  "sv, "video/quicktime"sv}, {"heic"sv, "image/heic"sv}, {"heix"sv, "image/heic"sv}, {"heim"sv, "image/heic"sv},
    {"heis"sv, "image/heic"sv},      {"hevc"sv, "image/heic"sv}, {"hevx"sv, "image/heic"sv}, {"mif1"sv, "image/heif"sv},
    {"msf1"sv, "image/heif"sv},      {"avif"sv, "image/avif"sv}, {"avis"sv, "image/avif"sv},
};

// Brands of MP4 that say no more than that.
constexpr std::string_view k_mp4_brands[] = {"iso"sv,  "mp4"sv,  "avc1"sv, "M4V"sv,
                                             "dash"sv, "MSNV"sv, "mmp4"sv, "f4v "sv};

std::uint32_t big_endian32(std::string_view s, std::size_t at) {
  return std::uint32_t{byte_at(s, at)} << 24 | std::uint32_t{byte_at(s, at + 1)} << 16 |
         std::uint32_t{byte_at(s, at + 2)} << 8 | std::uint32_t{byte_at(s, at + 3)};
}

// The standard's MP4 signature (a whole `ftyp` box within the sniffed bytes, its size a
// multiple of four), typed by its brands: the major brand at 8, the compatible ones from 16.
std::string_view iso_media(std::string_view s) {
  if (s.size() < 12 || s.substr(4, 4) != "ftyp") return {};
  const std::uint32_t box = big_endian32(s, 0);
  if (box < 12 || box % 4 != 0 || box > s.size()) return {};
  bool mp4 = false;
  for (std::size_t at = 8; at + 4 <= box; at += at == 8 ? 8 : 4) {  // the minor version at 12 is no brand
    const std::string_view brand = s.substr(at, 4);
    for (const Brand& specific : k_specific_brands) {
      if (brand.starts_with(specific.prefix)) return specific.type;
    }
    mp4 = mp4 || std::any_of(std::begin(k_mp4_brands), std::end(k_mp4_brands),
                             [brand](std::string_view prefix) { return brand.starts_with(prefix); });
  }
  return mp4 ? "video/mp4"sv : std::string_view{};
}

// --- EBML (WebM, Matroska) ------------------------------------------------------------------

// The standard's WebM signature: the EBML magic, then the DocType element (0x42 0x82) within
// the first 38 bytes, its size a variable-length integer, its value "webm".
std::string_view ebml(std::string_view s) {
  if (!s.starts_with("\x1A\x45\xDF\xA3"sv)) return {};
  const std::size_t window = std::min<std::size_t>(s.size(), 38);
  for (std::size_t at = 4; at + 2 < window; ++at) {
    if (byte_at(s, at) != 0x42 || byte_at(s, at + 1) != 0x82) continue;
    std::size_t pos = at + 2;
    const std::uint8_t first = byte_at(s, pos);
    std::size_t length = 1;
    while (length <= 8 && (first & (0x80 >> (length - 1))) == 0) ++length;
    if (length > 8 || pos + length > s.size()) return {};
    std::uint64_t value = first & (0xFFu >> length);
    for (std::size_t i = 1; i < length; ++i) value = value << 8 | byte_at(s, pos + i);
    pos += length;
    if (value > s.size() - pos) return {};
    const std::string_view doc_type = s.substr(pos, static_cast<std::size_t>(value));
    if (doc_type == "webm") return "video/webm"sv;
    if (doc_type == "matroska") return "video/x-matroska"sv;
    return {};
  }
  return {};
}

// --- BMP ------------------------------------------------------------------------------------

// "BM", then at 14 the size of one of the DIB headers the format has had (core, info, v2 to
// v5, OS/2's): the two letters alone start too much text.
std::string_view bmp(std::string_view s) {
  if (s.size() < 18 || !s.starts_with("BM")) return {};
  const std::uint32_t dib = std::uint32_t{byte_at(s, 14)} | std::uint32_t{byte_at(s, 15)} << 8 |
                            std::uint32_t{byte_at(s, 16)} << 16 | std::uint32_t{byte_at(s, 17)} << 24;
  constexpr std::uint32_t k_dib_sizes[] = {12, 40, 52, 56, 64, 108, 124};
  return std::find(std::begin(k_dib_sizes), std::end(k_dib_sizes), dib) != std::end(k_dib_sizes) ? "image/bmp"sv
                                                                                                 : std::string_view{};
}

// --- MPEG audio frames (MP3 without ID3, AAC in ADTS) ---------------------------------------

// The length of the MPEG Layer III frame whose header starts at `at`, or 0 when none does.
std::size_t mp3_frame(std::string_view s, std::size_t at) {
  if (s.size() < at + 4 || byte_at(s, at) != 0xFF || (byte_at(s, at + 1) & 0xE0) != 0xE0) return 0;
  const unsigned version = (byte_at(s, at + 1) >> 3) & 3;  // 0: MPEG 2.5, 1: reserved, 2: MPEG 2, 3: MPEG 1
  const unsigned layer = (byte_at(s, at + 1) >> 1) & 3;    // 1: Layer III
  const unsigned bitrate = byte_at(s, at + 2) >> 4;        // 0: free format, 15: invalid
  const unsigned rate = (byte_at(s, at + 2) >> 2) & 3;     // 3: reserved
  const unsigned padding = (byte_at(s, at + 2) >> 1) & 1;
  if (version == 1 || layer != 1 || bitrate == 0 || bitrate == 15 || rate == 3) return 0;
  constexpr unsigned k_mpeg1_kbps[] = {0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320};
  constexpr unsigned k_mpeg2_kbps[] = {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160};
  constexpr unsigned k_hz[4][3] = {{11025, 12000, 8000}, {0, 0, 0}, {22050, 24000, 16000}, {44100, 48000, 32000}};
  const bool mpeg1 = version == 3;
  const unsigned kbps = mpeg1 ? k_mpeg1_kbps[bitrate] : k_mpeg2_kbps[bitrate];
  return (mpeg1 ? 144 : 72) * kbps * 1000 / k_hz[version][rate] + padding;
}

// The length of the ADTS frame whose header starts at `at`, or 0 when none does: the sync
// word with layer 0, a sampling frequency index that exists, a length that holds the header.
std::size_t adts_frame(std::string_view s, std::size_t at) {
  if (s.size() < at + 7 || byte_at(s, at) != 0xFF || (byte_at(s, at + 1) & 0xF6) != 0xF0) return 0;
  if (((byte_at(s, at + 2) >> 2) & 0xF) >= 13) return 0;
  const std::size_t length =
      std::size_t{byte_at(s, at + 3) & 3u} << 11 | std::size_t{byte_at(s, at + 4)} << 3 | byte_at(s, at + 5) >> 5;
  return length >= 7 ? length : 0;
}

// A frame at the start, and the next one too when its header (`header` bytes) lies within
// the sniffed bytes: one header alone is a few bits that other data starts with often enough.
bool frames(std::string_view s, std::size_t (*frame)(std::string_view, std::size_t), std::size_t header) {
  const std::size_t first = frame(s, 0);
  if (first == 0) return false;
  return s.size() < first + header || frame(s, first) != 0;
}

std::string_view mpeg_audio(std::string_view s) {
  if (s.size() < 4) return {};
  if (frames(s, mp3_frame, 4)) return "audio/mpeg"sv;
  if (frames(s, adts_frame, 7)) return "audio/aac"sv;
  return {};
}

}  // namespace

std::string_view sniff(std::string_view head) {
  head = head.substr(0, std::min(head.size(), k_sniff_bytes));
  std::string_view text = head;
  if (text.starts_with("\xEF\xBB\xBF"sv)) text.remove_prefix(3);
  text = skip_space(text);
  if (text.starts_with('<')) return markup(text);
  for (const Signature& signature : k_signatures) {
    if (matches(head, signature)) return signature.type;
  }
  for (const auto detect : {iso_media, ebml, bmp, mpeg_audio}) {
    if (const std::string_view type = detect(head); !type.empty()) return type;
  }
  return {};
}

}  // namespace dispatchd::media
