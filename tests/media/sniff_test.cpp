// sniff() as tables: each format's first bytes, the markup that must never pass for an
// image, polyglots, truncated heads, and the bounded read.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "media/sniff.h"

using namespace dispatchd;
using namespace std::string_literals;
using namespace std::string_view_literals;

namespace {

// An ISO media file's first box: `ftyp`, the major brand, minor version 0, the compatible
// brands; `size` overrides the box's own length field.
std::string ftyp_box(std::string_view major, std::vector<std::string_view> compatible, std::uint32_t size = 0) {
  if (size == 0) size = static_cast<std::uint32_t>(16 + 4 * compatible.size());
  std::string box{static_cast<char>(size >> 24), static_cast<char>(size >> 16), static_cast<char>(size >> 8),
                  static_cast<char>(size)};
  box += "ftyp";
  box += major;
  box += "\0\0\0\0"s;
  for (const std::string_view brand : compatible) box += brand;
  return box;
}

// An EBML header whose DocType element holds `doc_type`.
std::string ebml_header(std::string_view doc_type) {
  std::string head = "\x1A\x45\xDF\xA3\x9F\x42\x86\x81\x01\x42\xF7\x81\x01\x42\xF2\x81\x04\x42\xF3\x81\x08"s;
  head += "\x42\x82"s;
  head += static_cast<char>(0x80 | doc_type.size());
  head += doc_type;
  head += "\x42\x87\x81\x04\x42\x85\x81\x02"s;
  return head;
}

// MPEG-1 Layer III, 128 kb/s, 44.1 kHz, no padding: 417-byte frames.
constexpr std::string_view k_mp3_header = "\xFF\xFB\x90\x64"sv;
constexpr std::size_t k_mp3_frame = 417;

std::string mp3_frames(std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += std::string(k_mp3_header) + std::string(k_mp3_frame - 4, '\x55');
  return out;
}

// AAC-LC in ADTS, 44.1 kHz, stereo, 20-byte frames.
constexpr std::string_view k_adts_header = "\xFF\xF1\x50\x80\x02\x9F\xFC"sv;

std::string adts_frames(std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += std::string(k_adts_header) + std::string(13, '\x21');
  return out;
}

std::string bmp_file(std::uint8_t dib_size) {
  std::string out = "BM\x46\0\0\0\0\0\0\0\x36\0\0\0"s;
  out += static_cast<char>(dib_size);
  out += "\0\0\0\x02\0\0\0\x02\0\0\0"s;
  return out;
}

struct SniffRow {
  const char* what;
  std::string head;
  std::string_view expected;
};

std::vector<SniffRow> sniff_rows() {
  const std::string png = "\x89PNG\r\n\x1A\n\0\0\0\rIHDR"s;
  return {
      // images
      {"JPEG (JFIF)", "\xFF\xD8\xFF\xE0\0\x10JFIF\0"s, "image/jpeg"},
      {"JPEG (Exif)",
       "\xFF\xD8\xFF\xE1\x12\x34"
       "Exif\0\0"s,
       "image/jpeg"},
      {"PNG", png, "image/png"},
      {"GIF87a", "GIF87a\x01\0\x01\0"s, "image/gif"},
      {"GIF89a", "GIF89a\x01\0\x01\0\x80\0\0"s, "image/gif"},
      {"GIF8 without its version is nothing", "GIF8", ""},
      {"WebP (lossy)", "RIFF\x24\0\0\0WEBPVP8 "s, "image/webp"},
      {"WebP (lossless)", "RIFF\x24\0\0\0WEBPVP8L"s, "image/webp"},
      {"BMP with a BITMAPINFOHEADER", bmp_file(40), "image/bmp"},
      {"BMP with a V5 header", bmp_file(124), "image/bmp"},
      {"BM and text is no bitmap", "BMW annual report 2024", ""},
      {"BM with an unknown DIB size", bmp_file(41), ""},
      {"icon", "\0\0\x01\0\x01\0\x10\x10"s, "image/x-icon"},
      {"cursor", "\0\0\x02\0\x01\0"s, "image/x-icon"},
      {"HEIC", ftyp_box("heic", {"mif1", "heic"}), "image/heic"},
      {"HEIF", ftyp_box("mif1", {"mif1"}), "image/heif"},
      {"AVIF", ftyp_box("avif", {"avif", "mif1", "miaf"}), "image/avif"},
      // audio
      {"Ogg (a voice note)", "OggS\0\x02\0\0\0\0\0\0\0\0"s, "audio/ogg"},
      {"MP3 with ID3", "ID3\x04\0\0\0\0\0\x23"s, "audio/mpeg"},
      {"MP3 frames without ID3", mp3_frames(3), "audio/mpeg"},
      {"one MP3 frame, the next one past the head", mp3_frames(1), "audio/mpeg"},
      {"an MP3 header followed by no second frame", mp3_frames(1) + std::string(20, 'x'), ""},
      {"an MP3 header with a reserved version", "\xFF\xEB\x90\x64"s + std::string(500, '\0'), ""},
      {"an MP3 header with a free bitrate", "\xFF\xFB\x00\x64"s, ""},
      {"AAC in ADTS", adts_frames(3), "audio/aac"},
      {"an ADTS header with a bad frequency index", "\xFF\xF1\x7C\x80\x02\x9F\xFC"s, ""},
      {"AMR", "#!AMR\n\x3C\x48"s, "audio/amr"},
      {"AMR wideband", "#!AMR-WB\n"s, "audio/amr-wb"},
      {"WAV", "RIFF\x24\x08\0\0WAVEfmt "s, "audio/wav"},
      {"AIFF", "FORM\0\0\x10\0AIFFCOMM"s, "audio/aiff"},
      {"MIDI", "MThd\0\0\0\x06\0\x01"s, "audio/midi"},
      {"M4A", ftyp_box("M4A ", {"M4A ", "mp42", "isom"}), "audio/mp4"},
      {"M4B (an audio book)", ftyp_box("M4B ", {"M4B "}), "audio/mp4"},
      {"a generic major brand with an M4A compatible brand", ftyp_box("isom", {"M4A "}), "audio/mp4"},
      // video
      {"MP4 (isom)", ftyp_box("isom", {"isom", "iso2", "avc1", "mp41"}), "video/mp4"},
      {"MP4 (mp42)", ftyp_box("mp42", {"mp42", "isom"}), "video/mp4"},
      {"MP4 (mp41, no compatible brand)", ftyp_box("mp41", {}), "video/mp4"},
      {"3GP", ftyp_box("3gp4", {"isom", "3gp4"}), "video/3gpp"},
      {"QuickTime", ftyp_box("qt  ", {"qt  "}), "video/quicktime"},
      {"an ftyp box of unknown brands", ftyp_box("zzzz", {"yyyy"}), ""},
      {"an ftyp box longer than the head", ftyp_box("isom", {"isom"}, 64), ""},
      {"an ftyp box whose size is not a multiple of 4", ftyp_box("isom", {"isom"}, 22) + "xx", ""},
      {"an ftyp box too small for a brand", ftyp_box("isom", {}, 8), ""},
      {"WebM", ebml_header("webm"), "video/webm"},
      {"Matroska", ebml_header("matroska"), "video/x-matroska"},
      {"EBML of another doc type", ebml_header("other"), ""},
      {"the EBML magic alone", "\x1A\x45\xDF\xA3"s, ""},
      {"AVI", "RIFF\0\0\0\0AVI LIST"s, "video/avi"},
      // documents and archives
      {"PDF", "%PDF-1.7\n%\xE2\xE3\xCF\xD3"s, "application/pdf"},
      {"PostScript", "%!PS-Adobe-3.0\n", "application/postscript"},
      {"zip (docx and xlsx too)", "PK\x03\x04\x14\0\x06\0"s, "application/zip"},
      {"gzip", "\x1F\x8B\x08\0\0\0\0\0"s, "application/x-gzip"},
      {"RAR 5", "Rar!\x1A\x07\x01\0"s, "application/x-rar-compressed"},
      // markup
      {"an HTML doctype", "<!DOCTYPE html>\n<html>", "text/html"},
      {"a lower-case doctype", "<!doctype html><title>x</title>", "text/html"},
      {"html after whitespace", " \t\r\n\f<HTML lang=en>", "text/html"},
      {"html after a byte order mark", "\xEF\xBB\xBF<html>"s, "text/html"},
      {"html after a byte order mark and whitespace", "\xEF\xBB\xBF\n  <html>"s, "text/html"},
      {"script", "<script>alert(1)</script>", "text/html"},
      {"iframe", "<iframe src=\"https://example.test\">", "text/html"},
      {"body", "<BODY onload=x>", "text/html"},
      {"head", "<head>", "text/html"},
      {"a paragraph", "<p>hello", "text/html"},
      {"a self-closing br", "<br/>", "text/html"},
      {"a tag ended by a newline", "<html\nlang=en>", "text/html"},
      {"a leading comment", "<!-- saved from a browser -->\n<p>x</p>", "text/html"},
      {"a comment alone", "<!-- nothing else -->", "text/html"},
      {"a tag that only starts like html", "<htmlx>", ""},
      {"an unknown element", "<note><to>x</to></note>", ""},
      {"svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>", "image/svg+xml"},
      {"svg in capitals", "<SVG>", "image/svg+xml"},
      {"svg after whitespace and a byte order mark", "\xEF\xBB\xBF \r\n<svg>"s, "image/svg+xml"},
      {"svg after a comment", "<!-- Generator: a drawing tool -->\n<svg width=\"1\">", "image/svg+xml"},
      {"svg after an XML declaration",
       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>", "image/svg+xml"},
      {"svg after a declaration, a comment and a doctype",
       "<?xml version=\"1.0\"?>\n<!-- x -->\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
       "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n<svg version=\"1.1\">",
       "image/svg+xml"},
      {"svg after a doctype with an internal subset holding >",
       "<?xml version=\"1.0\"?><!DOCTYPE svg [ <!ENTITY a \"x>y\"> ]><svg>", "image/svg+xml"},
      {"svg after a processing instruction", "<?xml version=\"1.0\"?><?xml-stylesheet href=\"a.css\"?><svg>",
       "image/svg+xml"},
      {"svg with a namespace prefix", "<?xml version=\"1.0\"?><svg:svg xmlns:svg=\"http://www.w3.org/2000/svg\">",
       "image/svg+xml"},
      {"svg after a doctype without a declaration", "<!DOCTYPE svg><svg>", "image/svg+xml"},
      {"XHTML", "<?xml version=\"1.0\"?>\n<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\">", "text/html"},
      {"other XML", "<?xml version=\"1.0\"?><rss version=\"2.0\">", "application/xml"},
      {"an XML declaration cut short", "<?xml version=\"1.0\"", "application/xml"},
      {"a root element's name cut short", "<?xml version=\"1.0\"?><sv", "application/xml"},
      {"a space before the element name", "< svg>", ""},
      // nothing
      {"empty", "", ""},
      {"plain text", "Hello, this is a note.", ""},
      {"CSV", "name,amount\nana,3\n", ""},
      {"one 0xFF byte", "\xFF"s, ""},
      {"two bytes of a frame sync", "\xFF\xFB"s, ""},
      {"a byte order mark alone", "\xEF\xBB\xBF"s, ""},
      {"UTF-16 html is not read", "\xFF\xFE<\0h\0t\0m\0l\0>\0"s, ""},
      // polyglots: the first bytes decide
      {"a GIF header followed by HTML", "GIF89a<html><script>alert(1)</script></html>", "image/gif"},
      {"a PNG header followed by svg", png + "<svg onload=alert(1)>", "image/png"},
      {"HTML followed by a GIF header", "<html>GIF89a", "text/html"},
      {"a JPEG after whitespace is no JPEG", " \xFF\xD8\xFF\xE0"s, ""},
  };
}

}  // namespace

TEST_CASE("sniff: the type each format's first bytes show") {
  for (const SniffRow& row : sniff_rows()) {
    INFO(row.what);
    CHECK(media::sniff(row.head) == row.expected);
  }
}

TEST_CASE("sniff: a head cut short anywhere never crashes and a signature cut short never matches") {
  for (const SniffRow& row : sniff_rows()) {
    INFO(row.what);
    for (std::size_t size = 0; size <= row.head.size(); ++size) {
      const std::string cut = row.head.substr(0, size);  // a copy: a read past its end is ASan's to see
      const std::string_view type = media::sniff(cut);
      CHECK((type.empty() || type.find('/') != std::string_view::npos));
    }
  }
  struct Cut {
    const char* what;
    std::string whole;
    std::size_t signature;  // the bytes the type needs
  };
  const Cut cuts[] = {
      {"PNG", "\x89PNG\r\n\x1A\n"s, 8},
      {"JPEG", "\xFF\xD8\xFF\xE0"s, 3},
      {"WebP", "RIFF\x24\0\0\0WEBPVP8 "s, 14},
      {"WAV", "RIFF\x24\0\0\0WAVE"s, 12},
      {"MP4", ftyp_box("isom", {"isom"}), 20},
      {"WebM", ebml_header("webm"), 28},
      {"PDF", "%PDF-1.4"s, 5},
      {"AMR", "#!AMR\n"s, 6},
      {"zip", "PK\x03\x04"s, 4},
      {"BMP", bmp_file(40), 18},
  };
  for (const Cut& cut : cuts) {
    INFO(cut.what);
    CHECK_FALSE(media::sniff(cut.whole.substr(0, cut.signature)).empty());
    for (std::size_t size = 0; size < cut.signature; ++size) {
      INFO(size);
      CHECK(media::sniff(cut.whole.substr(0, size)).empty());
    }
  }
}

TEST_CASE("sniff: reads the first k_sniff_bytes only whatever the length of the input") {
  constexpr std::size_t k_ten_mb = 10 * 1000 * 1000;
  SECTION("svg past the head is not seen: the prolog is all the head shows") {
    std::string file = "<?xml version=\"1.0\"?>\n<!--" + std::string(2000, ' ') + "-->\n<svg onload=\"alert(1)\">";
    file.resize(k_ten_mb, ' ');
    REQUIRE(file.find("<svg") > media::k_sniff_bytes);
    CHECK(media::sniff(file) == "application/xml");
  }
  SECTION("a frame whose successor lies past the head is judged on the head") {
    // MPEG-1 Layer III at 320 kb/s and 32 kHz: 1440-byte frames, the second out of sight.
    std::string file = "\xFF\xFB\xE8\x64"s + std::string(1436, '\0') + "not a frame";
    file.resize(k_ten_mb, 'x');
    CHECK(media::sniff(file) == "audio/mpeg");
  }
  SECTION("every row padded to 10 MB reads as its first k_sniff_bytes") {
    for (const SniffRow& row : sniff_rows()) {
      INFO(row.what);
      std::string file = row.head;
      file.resize(k_ten_mb, '\x5A');
      CHECK(media::sniff(file) == media::sniff(std::string_view(file).substr(0, media::k_sniff_bytes)));
    }
  }
}
