#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "connectors/email/email.h"
#include "connectors/imap/attachment.h"

using namespace dispatchd;
using connectors::MediaFetchStatus;
using imap::ErrorKind;

TEST_CASE("imap attachments: a mail's files named by mailbox, UID and IMAP section", "[imap]") {
  const std::string raw =
      "From: ana@example.com\r\nTo: soporte@example.com\r\nSubject: Factura\r\nMIME-Version: 1.0\r\n"
      "Content-Type: multipart/mixed; boundary=outer\r\n\r\n"
      "--outer\r\nContent-Type: text/plain\r\n\r\nAdjunto.\r\n"
      "--outer\r\nContent-Type: multipart/mixed; boundary=inner\r\n\r\n"
      "--inner\r\nContent-Type: application/pdf; name=f.pdf\r\nContent-Disposition: attachment; filename=f.pdf\r\n"
      "Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n"
      "--inner\r\nContent-Type: text/csv; name=l.csv\r\nContent-Disposition: attachment; filename=l.csv\r\n"
      "Content-Transfer-Encoding: Quoted-Printable\r\n\r\na=3Db\r\n"
      "--inner--\r\n--outer--\r\n";
  auto mail = email::decode(raw);
  REQUIRE(mail);
  const auto files = imap::media_of(*mail, "ventas", 1700000000, 42);
  REQUIRE(files.size() == 2);
  CHECK(files[0].provider_ref == "ventas/1700000000/42/2.1/base64");
  CHECK(files[0].kind == store::MediaKind::document);
  CHECK(files[0].filename == "f.pdf");
  CHECK(files[1].provider_ref == "ventas/1700000000/42/2.2/quoted-printable");
  CHECK(imap::section_of({}) == "1");
}

TEST_CASE("imap attachments: a file's handle read back", "[imap]") {
  struct Row {
    const char* text;
    bool ok;
  };
  const std::vector<Row> table = {
      {"ventas/17/42/2.1/base64", true}, {"ventas/17/42/1/", true},          {"a_b-c/1/1/1/7bit", true},
      {"ventas/0/42/1/base64", false},   {"ventas/17/0/1/base64", false},    {"ventas/17/42/0/base64", false},
      {"ventas/17/42/2./base64", false}, {"ventas/17/42/1/Base64", false},   {"Ventas/17/42/1/base64", false},
      {"ventas/17/42/1", false},         {"ventas/17/42/1/base64/x", false}, {"/17/42/1/base64", false},
      {"ventas/017/42/1/base64", false}, {"ventas/17/42/1/b64 ", false},     {"", false},
  };
  for (const auto& row : table) {
    INFO(row.text);
    const auto ref = imap::parse_part_ref(row.text);
    CHECK(ref.has_value() == row.ok);
    if (ref) CHECK(imap::part_ref(*ref) == row.text);
  }
}

TEST_CASE("imap attachments: the transfer encoding undone", "[imap]") {
  CHECK(imap::decode_transfer("base64", "JVBE\r\nRi0x\r\nLjQK\r\n") == std::string("%PDF-1.4\n"));
  CHECK(imap::decode_transfer("base64", "YQ==") == std::string("a"));
  CHECK(imap::decode_transfer("base64", "YQ") == std::string("a"));
  CHECK_FALSE(imap::decode_transfer("base64", "YQ=x"));
  CHECK_FALSE(imap::decode_transfer("base64", "Y"));
  CHECK_FALSE(imap::decode_transfer("base64", "YW*j"));
  CHECK(imap::decode_transfer("quoted-printable", "a=3Db=\r\nc=0A=\nd =ZZ=") == std::string("a=bc\nd =ZZ="));
  CHECK(imap::decode_transfer("7bit", "as is\r\n") == std::string("as is\r\n"));
  CHECK(imap::decode_transfer("", "as is") == std::string("as is"));
  CHECK(imap::decode_transfer("binary", std::string("\0\1", 2)) == std::string("\0\1", 2));
  CHECK_FALSE(imap::decode_transfer("x-uuencode", "begin"));
}

TEST_CASE("imap attachments: a failed fetch as the fetch's outcome", "[imap]") {
  struct Row {
    ErrorKind kind;
    MediaFetchStatus status;
  };
  const std::vector<Row> table = {
      {ErrorKind::message_missing, MediaFetchStatus::expired},
      {ErrorKind::uidvalidity_changed, MediaFetchStatus::expired},
      {ErrorKind::too_large, MediaFetchStatus::too_large},
      {ErrorKind::connection, MediaFetchStatus::retry},
      {ErrorKind::timeout, MediaFetchStatus::retry},
      {ErrorKind::unavailable, MediaFetchStatus::retry},
      {ErrorKind::protocol, MediaFetchStatus::retry},
      {ErrorKind::auth_refused, MediaFetchStatus::retry},
      {ErrorKind::tls_refused, MediaFetchStatus::retry},
      {ErrorKind::mailbox_missing, MediaFetchStatus::refused},
      {ErrorKind::refused, MediaFetchStatus::refused},
      {ErrorKind::unsupported, MediaFetchStatus::refused},
      {ErrorKind::invalid_argument, MediaFetchStatus::refused},
  };
  for (const auto& row : table) {
    INFO(imap::to_string(row.kind));
    const auto result = imap::fetch_failure({row.kind, "what the server said"});
    CHECK(result.status == row.status);
    CHECK(result.why.find("what the server said") != std::string::npos);
  }
}
