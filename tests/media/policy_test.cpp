// The media rules as tables: essences, declared against sniffed, a mail attachment's kind,
// what the staff page may show inline, and the size caps at their edges.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string_view>

#include "media/policy.h"
#include "media/sniff.h"

using namespace dispatchd;
using namespace std::string_view_literals;
using common::MediaKind;
using media::Disposition;
using media::SizeVerdict;
using media::TypeMatch;

namespace {

constexpr std::int64_t k_mib = std::int64_t{1} << 20;
constexpr std::int64_t k_gib = std::int64_t{1} << 30;

}  // namespace

TEST_CASE("essence: lower-case type/subtype without parameters or whitespace") {
  struct Row {
    std::string_view content_type;
    std::string_view expected;
  };
  const Row rows[] = {
      {"Audio/OGG; codecs=opus", "audio/ogg"},
      {"audio/ogg; codecs=opus", "audio/ogg"},
      {"image/jpeg", "image/jpeg"},
      {" image/jpeg ", "image/jpeg"},
      {"\timage/gif\t; x=y", "image/gif"},
      {"image/png;", "image/png"},
      {"text/html; charset=\"utf-8\"", "text/html"},
      {"IMAGE/SVG+XML", "image/svg+xml"},
      {"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
       "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
      {"", ""},
      {";", ""},
      {"image", ""},
      {"/png", ""},
      {"image/", ""},
      {"image / png", ""},
      {"ima ge/png", ""},
      {"image/png/x", ""},
      {"image/p\xC3\xA9g", ""},
      {"image/png\r\n", ""},
  };
  for (const Row& row : rows) {
    INFO(row.content_type);
    CHECK(media::essence(row.content_type) == row.expected);
  }
}

TEST_CASE("compare: the declared type against the sniffed one") {
  struct Row {
    std::string_view declared;
    std::string_view sniffed;
    TypeMatch expected;
  };
  const Row rows[] = {
      // WhatsApp's declarations
      {"image/jpeg", "image/jpeg", TypeMatch::same},
      {"audio/ogg; codecs=opus", "audio/ogg", TypeMatch::same},
      {"video/mp4", "video/mp4", TypeMatch::same},
      {"image/webp", "image/webp", TypeMatch::same},
      {"application/pdf", "application/pdf", TypeMatch::same},
      // aliases of one format
      {"image/jpg", "image/jpeg", TypeMatch::same},
      {"image/pjpeg", "image/jpeg", TypeMatch::same},
      {"audio/mp3", "audio/mpeg", TypeMatch::same},
      {"audio/x-m4a", "audio/mp4", TypeMatch::same},
      {"audio/opus", "audio/ogg", TypeMatch::same},
      {"application/ogg", "audio/ogg", TypeMatch::same},
      {"audio/x-wav", "audio/wav", TypeMatch::same},
      {"audio/wave", "audio/wav", TypeMatch::same},
      {"application/x-pdf", "application/pdf", TypeMatch::same},
      {"text/xml", "application/xml", TypeMatch::same},
      {"application/xhtml+xml", "text/html", TypeMatch::same},
      {"Image/JPEG", "image/jpeg", TypeMatch::same},
      // one container
      {"audio/mp4", "video/mp4", TypeMatch::same},
      {"video/quicktime", "video/mp4", TypeMatch::same},
      {"video/mp4", "video/quicktime", TypeMatch::same},
      {"audio/webm", "video/webm", TypeMatch::same},
      {"video/ogg", "audio/ogg", TypeMatch::same},
      {"audio/3gpp", "video/3gpp", TypeMatch::same},
      // built on what was sniffed
      {"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "application/zip", TypeMatch::same},
      {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "application/zip", TypeMatch::same},
      {"application/vnd.oasis.opendocument.text", "application/zip", TypeMatch::same},
      {"application/epub+zip", "application/zip", TypeMatch::same},
      {"image/svg+xml", "application/xml", TypeMatch::same},
      // the bytes say otherwise
      {"image/png", "image/jpeg", TypeMatch::differs},
      {"image/jpeg", "text/html", TypeMatch::differs},
      {"image/gif", "image/svg+xml", TypeMatch::differs},
      {"image/svg+xml", "image/gif", TypeMatch::differs},
      {"application/xml", "image/svg+xml", TypeMatch::differs},
      {"application/pdf", "application/zip", TypeMatch::differs},
      {"application/zip", "application/pdf", TypeMatch::differs},
      {"audio/mpeg", "video/mp4", TypeMatch::differs},
      {"video/mp4", "video/3gpp", TypeMatch::differs},
      {"text/plain", "image/png", TypeMatch::differs},
      // a side says nothing
      {"image/jpeg", "", TypeMatch::unknown},
      {"text/plain", "", TypeMatch::unknown},
      {"", "image/png", TypeMatch::unknown},
      {"garbage", "image/png", TypeMatch::unknown},
      {"application/octet-stream", "image/png", TypeMatch::unknown},
      {"", "", TypeMatch::unknown},
  };
  for (const Row& row : rows) {
    INFO(row.declared << " vs sniffed " << row.sniffed);
    CHECK(media::compare(row.declared, row.sniffed) == row.expected);
  }
}

TEST_CASE("kind_of: a mail attachment's kind from its content type") {
  struct Row {
    std::string_view content_type;
    MediaKind expected;
  };
  const Row rows[] = {
      {"image/jpeg", MediaKind::image},
      {"IMAGE/PNG", MediaKind::image},
      {"image/heic", MediaKind::image},
      {"image/svg+xml", MediaKind::document},
      {"image/svg+xml; charset=utf-8", MediaKind::document},
      {"Image/SVG+XML", MediaKind::document},
      {"audio/ogg; codecs=opus", MediaKind::audio},
      {"audio/mpeg", MediaKind::audio},
      {"application/ogg", MediaKind::audio},
      {"video/mp4", MediaKind::video},
      {"video/quicktime", MediaKind::video},
      {"application/pdf", MediaKind::document},
      {"text/html", MediaKind::document},
      {"application/octet-stream", MediaKind::document},
      {"", MediaKind::document},
      {"image", MediaKind::document},
      {"image/", MediaKind::document},
  };
  for (const Row& row : rows) {
    INFO(row.content_type);
    CHECK(media::kind_of(row.content_type) == row.expected);
  }
}

TEST_CASE("serving: inline only when both types are on the safe list and of one family") {
  struct Row {
    std::string_view stored;
    std::string_view sniffed;
    Disposition expected;
  };
  const Row rows[] = {
      // images
      {"image/jpeg", "image/jpeg", Disposition::inline_image},
      {"image/jpg", "image/jpeg", Disposition::inline_image},
      {"image/png", "image/png", Disposition::inline_image},
      {"image/gif", "image/gif", Disposition::inline_image},
      {"image/webp", "image/webp", Disposition::inline_image},
      {"image/bmp", "image/bmp", Disposition::inline_image},
      {"image/jpeg", "image/png", Disposition::inline_image},
      {"image/x-icon", "image/x-icon", Disposition::attachment},
      {"image/heic", "image/heic", Disposition::attachment},
      // active content, declared or sniffed
      {"image/svg+xml", "image/svg+xml", Disposition::attachment},
      {"image/svg+xml", "image/gif", Disposition::attachment},
      {"image/gif", "image/svg+xml", Disposition::attachment},
      {"image/jpeg", "text/html", Disposition::attachment},
      {"text/html", "image/gif", Disposition::attachment},
      {"text/html", "text/html", Disposition::attachment},
      {"application/xml", "application/xml", Disposition::attachment},
      {"image/png", "application/xml", Disposition::attachment},
      // audio
      {"audio/ogg; codecs=opus", "audio/ogg", Disposition::inline_audio},
      {"audio/opus", "audio/ogg", Disposition::inline_audio},
      {"application/ogg; codecs=opus", "audio/ogg", Disposition::inline_audio},
      {"audio/mpeg", "audio/mpeg", Disposition::inline_audio},
      {"audio/mp4", "audio/mp4", Disposition::inline_audio},
      {"audio/mp4", "video/mp4", Disposition::inline_audio},
      {"audio/x-m4a", "audio/mp4", Disposition::inline_audio},
      {"audio/aac", "audio/aac", Disposition::inline_audio},
      {"audio/amr", "audio/amr", Disposition::inline_audio},
      {"audio/wav", "audio/wav", Disposition::inline_audio},
      {"audio/webm", "video/webm", Disposition::inline_audio},
      {"audio/ogg", "audio/mpeg", Disposition::inline_audio},
      {"audio/mpeg", "video/mp4", Disposition::attachment},
      {"audio/ogg", "video/webm", Disposition::attachment},
      {"audio/midi", "audio/midi", Disposition::attachment},
      // families that differ
      {"audio/mp4", "image/png", Disposition::attachment},
      {"image/png", "audio/ogg", Disposition::attachment},
      // video and documents are downloads
      {"video/mp4", "video/mp4", Disposition::attachment},
      {"application/pdf", "application/pdf", Disposition::attachment},
      // nothing to go on
      {"image/png", "", Disposition::attachment},
      {"audio/ogg", "", Disposition::attachment},
      {"", "image/png", Disposition::attachment},
      {"application/octet-stream", "image/png", Disposition::attachment},
      {"", "", Disposition::attachment},
  };
  for (const Row& row : rows) {
    INFO(row.stored << " stored, sniffed " << row.sniffed);
    CHECK(media::serving(row.stored, row.sniffed) == row.expected);
  }
}

TEST_CASE("serving: a polyglot GIF with HTML behind it is a GIF and never inline as SVG") {
  const std::string_view polyglot = "GIF89a/*\x01\0\x01\0*/=1;<html><script>alert(1)</script></html>"sv;
  const std::string_view sniffed = media::sniff(polyglot);
  CHECK(sniffed == "image/gif");
  CHECK(media::serving("image/gif", sniffed) == Disposition::inline_image);
  CHECK(media::serving("image/svg+xml", sniffed) == Disposition::attachment);
  CHECK(media::serving("text/html", sniffed) == Disposition::attachment);
  CHECK(media::compare("image/svg+xml", sniffed) == TypeMatch::differs);
}

TEST_CASE("cap: the documented defaults") {
  const media::Limits defaults;
  struct Row {
    MediaKind kind;
    std::int64_t expected;
  };
  const Row rows[] = {
      {MediaKind::image, 5 * k_mib},     {MediaKind::audio, 16 * k_mib},   {MediaKind::video, 16 * k_mib},
      {MediaKind::document, 25 * k_mib}, {MediaKind::sticker, 512 * 1024},
  };
  for (const Row& row : rows) {
    INFO(static_cast<int>(row.kind));
    CHECK(media::cap(defaults, row.kind) == row.expected);
  }
  CHECK(defaults.total == 10 * k_gib);
}

TEST_CASE("admit: each cap at its edge and the total without overflow") {
  const media::Limits defaults;
  const media::Limits unbounded_total{.total = std::numeric_limits<std::int64_t>::max()};
  constexpr std::int64_t k_max = std::numeric_limits<std::int64_t>::max();
  struct Row {
    const char* what;
    const media::Limits& limits;
    MediaKind kind;
    std::int64_t size;
    std::int64_t stored_total;
    SizeVerdict expected;
  };
  const Row rows[] = {
      {"an empty file", defaults, MediaKind::image, 0, 0, SizeVerdict::fits},
      {"an image at its cap", defaults, MediaKind::image, 5 * k_mib, 0, SizeVerdict::fits},
      {"an image a byte over", defaults, MediaKind::image, 5 * k_mib + 1, 0, SizeVerdict::over_type_cap},
      {"a voice note at 16 MiB", defaults, MediaKind::audio, 16 * k_mib, 0, SizeVerdict::fits},
      {"audio a byte over", defaults, MediaKind::audio, 16 * k_mib + 1, 0, SizeVerdict::over_type_cap},
      {"a video at 16 MiB", defaults, MediaKind::video, 16 * k_mib, 0, SizeVerdict::fits},
      {"a video a byte over", defaults, MediaKind::video, 16 * k_mib + 1, 0, SizeVerdict::over_type_cap},
      {"a document at 25 MiB", defaults, MediaKind::document, 25 * k_mib, 0, SizeVerdict::fits},
      {"a document of WhatsApp's 100 MB", defaults, MediaKind::document, 100'000'000, 0, SizeVerdict::over_type_cap},
      {"a sticker at 512 KiB", defaults, MediaKind::sticker, 512 * 1024, 0, SizeVerdict::fits},
      {"a sticker a byte over", defaults, MediaKind::sticker, 512 * 1024 + 1, 0, SizeVerdict::over_type_cap},
      {"an image sized as a sticker cap is no sticker", defaults, MediaKind::image, 512 * 1024 + 1, 0,
       SizeVerdict::fits},
      {"filling the total exactly", defaults, MediaKind::image, k_mib, 10 * k_gib - k_mib, SizeVerdict::fits},
      {"a byte past the total", defaults, MediaKind::image, k_mib + 1, 10 * k_gib - k_mib, SizeVerdict::over_total},
      {"nothing more when full", defaults, MediaKind::image, 1, 10 * k_gib, SizeVerdict::over_total},
      {"an empty file when full", defaults, MediaKind::image, 0, 10 * k_gib, SizeVerdict::fits},
      {"already over the total", defaults, MediaKind::image, 0, 10 * k_gib + 1, SizeVerdict::over_total},
      {"over both: the kind's cap first", defaults, MediaKind::image, 6 * k_mib, 10 * k_gib,
       SizeVerdict::over_type_cap},
      {"a negative size", defaults, MediaKind::image, -1, 0, SizeVerdict::over_type_cap},
      {"a negative stored total", defaults, MediaKind::image, 1, -1, SizeVerdict::over_total},
      {"near the int64 limit: fits", unbounded_total, MediaKind::image, 10, k_max - 10, SizeVerdict::fits},
      {"near the int64 limit: no overflow", unbounded_total, MediaKind::image, 11, k_max - 10, SizeVerdict::over_total},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    CHECK(media::admit(row.limits, row.kind, row.size, row.stored_total) == row.expected);
  }
}
