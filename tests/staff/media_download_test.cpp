// How a kept file is handed to staff (staff/media_download.h), as a table: inline only for a
// safe image or audio file whose bytes agree; SVG, HTML and anything else a download; the
// customer's file name only percent-encoded.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "staff/media_download.h"

using namespace dispatchd;

namespace {

store::MediaRow file(std::string declared, std::string sniffed, std::string filename = "") {
  store::MediaRow m;
  m.id = 7;
  m.state = store::MediaState::stored;
  m.declared_type = std::move(declared);
  m.sniffed_type = std::move(sniffed);
  m.filename = std::move(filename);
  return m;
}

}  // namespace

TEST_CASE("media download: inline only for a safe image or audio file whose bytes agree", "[media]") {
  struct Row {
    const char* declared;
    const char* sniffed;
    bool inline_shown;
    const char* content_type;
  };
  const std::vector<Row> rows = {
      {"image/jpeg", "image/jpeg", true, "image/jpeg"},
      {"image/png", "image/png", true, "image/png"},
      {"audio/ogg; codecs=opus", "audio/ogg", true, "audio/ogg"},
      {"audio/mpeg", "audio/mpeg", true, "audio/mpeg"},
      {"image/svg+xml", "image/svg+xml", false, "image/svg+xml"},
      {"image/jpeg", "text/html", false, "image/jpeg"},
      {"image/jpeg", "image/svg+xml", false, "image/jpeg"},
      {"text/html", "text/html", false, "text/html"},
      {"application/pdf", "application/pdf", false, "application/pdf"},
      {"image/jpeg", "", false, "image/jpeg"},
      {"", "image/jpeg", false, "application/octet-stream"},
      {"not a type", "image/png", false, "application/octet-stream"},
  };
  for (const auto& row : rows) {
    INFO(row.declared << " / " << row.sniffed);
    const auto served = staff::media_serving(file(row.declared, row.sniffed));
    CHECK(served.inline_shown == row.inline_shown);
    CHECK(served.content_type == row.content_type);
    CHECK(served.disposition == std::string(row.inline_shown ? "inline" : "attachment") + "; filename=\"media-7\"");
  }
}

TEST_CASE("media download: the customer's file name goes percent-encoded into filename* only", "[media]") {
  const auto served = staff::media_serving(file("application/pdf", "application/pdf", "fa\"ctura\r\n;x.pdf"));
  CHECK(served.disposition == "attachment; filename=\"media-7\"; filename*=UTF-8''fa%22ctura%0D%0A%3Bx.pdf");
  const auto accented = staff::media_serving(file("application/pdf", "application/pdf", "recibo año.pdf"));
  CHECK(accented.disposition == "attachment; filename=\"media-7\"; filename*=UTF-8''recibo%20a%C3%B1o.pdf");
}

TEST_CASE("media download: every answer says not to sniff, run or frame it", "[media]") {
  bool nosniff = false;
  bool sandbox = false;
  for (const auto& [name, value] : staff::k_media_headers) {
    if (name == "X-Content-Type-Options") nosniff = value == "nosniff";
    if (name == "Content-Security-Policy") sandbox = value.find("sandbox") != std::string_view::npos;
  }
  CHECK(nosniff);
  CHECK(sandbox);
}
