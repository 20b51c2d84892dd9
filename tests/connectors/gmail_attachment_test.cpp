#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "connectors/email/email.h"
#include "connectors/gmail/attachment.h"
#include "connectors/gmail/base64url.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using connectors::MediaFetchStatus;
using gmail::ApiError;
using gmail::ApiErrorKind;
using gmail::AttachmentData;

namespace {

// A mail with a text body and an HTML alternative, a PDF beside them, and a forwarded mail.
const std::string k_mixed =
    "From: Ana <ana@example.com>\r\nTo: soporte@example.com\r\nSubject: Factura\r\nMIME-Version: 1.0\r\n"
    "Content-Type: multipart/mixed; boundary=outer\r\n\r\n"
    "--outer\r\nContent-Type: multipart/alternative; boundary=alt\r\n\r\n"
    "--alt\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nAdjunto la factura.\r\n"
    "--alt\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>Adjunto la factura.</p>\r\n--alt--\r\n"
    "--outer\r\nContent-Type: application/pdf; name=\"factura.pdf\"\r\n"
    "Content-Disposition: attachment; filename=\"factura.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n"
    "JVBERi0xLjQK\r\n"
    "--outer\r\nContent-Type: multipart/mixed; boundary=inner\r\n\r\n"
    "--inner\r\nContent-Type: image/jpeg; name=foto.jpg\r\nContent-Disposition: attachment; filename=foto.jpg\r\n"
    "Content-Transfer-Encoding: base64\r\n\r\n/9j/4AAQ\r\n"
    "--inner\r\nContent-Type: message/rfc822\r\n\r\nFrom: b@example.com\r\nSubject: old\r\n\r\nold text\r\n"
    "--inner--\r\n--outer--\r\n";

const std::string k_pdf_only =
    "From: ana@example.com\r\nTo: soporte@example.com\r\nSubject: Scan\r\nMIME-Version: 1.0\r\n"
    "Content-Type: application/pdf; name=scan.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n";

ApiError error(ApiErrorKind kind, int status, std::optional<std::chrono::seconds> retry_after = std::nullopt) {
  return ApiError{kind, status, "", "what Google said", retry_after};
}

// What streaming `json` in pieces of `piece` bytes gives: the bytes handed over and the end.
struct Streamed {
  std::string bytes;
  bool finished = false;
  std::string error;
};

Streamed stream(const std::string& json, std::size_t piece) {
  Streamed out;
  AttachmentData reader([&out](std::string_view b) {
    out.bytes.append(b);
    return true;
  });
  for (std::size_t at = 0; at < json.size(); at += piece) {
    if (reader.feed(std::string_view(json).substr(at, piece)) != AttachmentData::Fed::more) break;
  }
  auto done = reader.finish();
  out.finished = done.has_value();
  if (!done) out.error = done.error();
  return out;
}

}  // namespace

TEST_CASE("gmail attachments: a mail's files are its attachment parts, named by their partId", "[gmail]") {
  auto mail = email::decode(k_mixed);
  REQUIRE(mail);
  REQUIRE(mail->attachments.size() == 3);
  CHECK(mail->attachments[0].path == std::vector<int>{1});
  CHECK(mail->attachments[1].path == std::vector<int>{2, 0});
  CHECK_FALSE(mail->attachments[2].leaf);  // the forwarded mail

  const auto files = gmail::media_of(*mail, "18c0fa");
  REQUIRE(files.size() == 2);
  CHECK(files[0].kind == store::MediaKind::document);
  CHECK(files[0].provider_ref == "18c0fa/1");
  CHECK(files[0].declared_type == "application/pdf");
  CHECK(files[0].filename == "factura.pdf");
  CHECK(files[0].declared_sha256.empty());
  CHECK(files[1].kind == store::MediaKind::image);
  CHECK(files[1].provider_ref == "18c0fa/2.0");
  CHECK(files[1].filename == "foto.jpg");

  // A mail that is its attachment alone: the message's own part, partId "".
  auto pdf = email::decode(k_pdf_only);
  REQUIRE(pdf);
  const auto only = gmail::media_of(*pdf, "18c0fb");
  REQUIRE(only.size() == 1);
  CHECK(only[0].provider_ref == "18c0fb/");
  CHECK(only[0].filename == "scan.pdf");
}

TEST_CASE("gmail attachments: a file's handle read back", "[gmail]") {
  struct Row {
    const char* ref;
    std::optional<gmail::AttachmentRef> parsed;
  };
  const std::vector<Row> table = {
      {"18c0fa/1", gmail::AttachmentRef{"18c0fa", "1"}},
      {"18c0fa/2.0.13", gmail::AttachmentRef{"18c0fa", "2.0.13"}},
      {"18c0fa/", gmail::AttachmentRef{"18c0fa", ""}},
      {"18c0fa", std::nullopt},
      {"/1", std::nullopt},
      {"18c0fa/1.", std::nullopt},
      {"18c0fa/.1", std::nullopt},
      {"18c0fa/1..2", std::nullopt},
      {"18c0fa/1/2", std::nullopt},
      {"18c0fa/a", std::nullopt},
      {"", std::nullopt},
  };
  for (const auto& row : table) {
    INFO(row.ref);
    const auto parsed = gmail::parse_attachment_ref(row.ref);
    REQUIRE(parsed.has_value() == row.parsed.has_value());
    if (parsed) {
      CHECK(parsed->message_id == row.parsed->message_id);
      CHECK(parsed->part_id == row.parsed->part_id);
    }
  }
  const int path[] = {2, 0};
  CHECK(gmail::attachment_ref("m", path) == "m/2.0");
}

TEST_CASE("gmail attachments: a failed request as the fetch's outcome", "[gmail]") {
  struct Row {
    ApiError error;
    MediaFetchStatus status;
    std::chrono::milliseconds retry_after;
  };
  const std::vector<Row> table = {
      {error(ApiErrorKind::not_found, 404), MediaFetchStatus::expired, 0ms},
      {error(ApiErrorKind::rate_limited, 429, 7s), MediaFetchStatus::retry, 7000ms},
      {error(ApiErrorKind::rate_limited, 403), MediaFetchStatus::retry, 0ms},
      {error(ApiErrorKind::server, 503, 3s), MediaFetchStatus::retry, 3000ms},
      {error(ApiErrorKind::server, 500), MediaFetchStatus::retry, 0ms},
      {error(ApiErrorKind::unreachable, 0), MediaFetchStatus::retry, 0ms},
      {error(ApiErrorKind::uncertain, 200), MediaFetchStatus::retry, 0ms},
      {error(ApiErrorKind::unauthorized, 401), MediaFetchStatus::retry, 0ms},
      {error(ApiErrorKind::permanent, 400), MediaFetchStatus::refused, 0ms},
      {error(ApiErrorKind::permanent, 403), MediaFetchStatus::refused, 0ms},
  };
  for (const auto& row : table) {
    INFO(gmail::describe(row.error));
    const auto result = gmail::fetch_failure("messages.attachments.get", row.error);
    CHECK(result.status == row.status);
    CHECK(result.retry_after == row.retry_after);
    CHECK(result.why.starts_with("messages.attachments.get: gmail api "));
  }
  const auto token = gmail::token_failure(gmail::OAuthError{gmail::OAuthErrorKind::invalid_grant, "refused"});
  CHECK(token.status == MediaFetchStatus::retry);
}

TEST_CASE("gmail attachments: the data of attachments.get streamed and decoded", "[gmail]") {
  std::string file;
  for (int i = 0; i < 100'000; ++i) file.push_back(static_cast<char>((i * 7 + i / 251) & 0xFF));
  const std::string data = gmail::base64url_encode(file);
  const std::vector<std::string> answers = {
      R"({"attachmentId": "ANGjdJ8", "size": 100000, "data": ")" + data + "\"}",
      R"({ "data" : ")" + data + R"(" , "size":100000,"attachmentId":"x\"data"})",
      R"({"meta": {"data": "not this", "list": [1, "]", {"data": 2}]}, "data": ")" + data + "\"}\n",
  };
  for (const auto& answer : answers) {
    for (const std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{4096}, answer.size()}) {
      INFO(answer.substr(0, 40) << " in pieces of " << piece);
      const auto got = stream(answer, piece);
      CHECK(got.finished);
      CHECK(got.bytes == file);
    }
  }
  // Gmail may pad; an empty file is a file.
  CHECK(stream(R"({"data":"JVBERi0xLjQK"})", 5).bytes == "%PDF-1.4\n");
  CHECK(stream(R"({"data":"YQ=="})", 2).bytes == "a");
  const auto empty = stream(R"({"size":0,"data":""})", 1);
  CHECK(empty.finished);
  CHECK(empty.bytes.empty());

  struct Bad {
    const char* answer;
    const char* error;
  };
  const std::vector<Bad> bad = {
      {R"({"size": 3})", "the answer has no \"data\""},
      {R"({"data": "YWJj)", "the answer ended before its object did"},
      {R"({"data": "YW+j"})", "\"data\" is not base64url"},
      {R"({"data": "Y"})", "\"data\" is not base64url"},
      {R"({"data": "YW\u0041"})", "\"data\" is not base64url"},
      {R"([{"data": "YWJj"}])", "not a JSON object"},
      {R"({"data": "YWJj"} x)", "bytes after the object"},
      {R"({"data": "YWJj", "data": "YWJj"})", "two \"data\" members"},
  };
  for (const auto& row : bad) {
    INFO(row.answer);
    const auto got = stream(row.answer, 2);
    CHECK_FALSE(got.finished);
    CHECK(got.error == row.error);
  }
}

TEST_CASE("gmail attachments: the receiver stops the stream", "[gmail]") {
  const std::string data = gmail::base64url_encode(std::string(200'000, 'z'));
  std::size_t handed = 0;
  AttachmentData reader([&handed](std::string_view bytes) {
    handed += bytes.size();
    return handed < 50'000;
  });
  const std::string answer = R"({"data":")" + data + "\"}";
  AttachmentData::Fed fed = AttachmentData::Fed::more;
  for (std::size_t at = 0; at < answer.size() && fed == AttachmentData::Fed::more; at += 1000)
    fed = reader.feed(std::string_view(answer).substr(at, 1000));
  CHECK(fed == AttachmentData::Fed::stopped);
  CHECK(handed < 70'000);  // never much more than asked for
  CHECK(reader.feed("x") != AttachmentData::Fed::more);
}

TEST_CASE("gmail attachments: the part looked up in messages.get format=full", "[gmail]") {
  const auto request = gmail::get_parts_request("https://gmail.googleapis.com", "tok", "18c0fa", 2);
  CHECK(request.url ==
        "https://gmail.googleapis.com/gmail/v1/users/me/messages/18c0fa?format=full&fields=payload%28partId%2CmimeType%"
        "2Cfilename%2Cbody%28attachmentId%2Csize%29%2Cparts%28partId%2CmimeType%2Cfilename%2Cbody%28attachmentId%"
        "2Csize%29%2Cparts%28partId%2CmimeType%2Cfilename%2Cbody%29%29%29");
  CHECK(request.headers.get("Authorization") == "Bearer tok");
  const auto attachment = gmail::attachment_request("https://gmail.googleapis.com/", "tok", "18c0fa", "ANGj/dJ8");
  CHECK(attachment.url == "https://gmail.googleapis.com/gmail/v1/users/me/messages/18c0fa/attachments/ANGj%2FdJ8");

  // The documented shape: a MessagePart tree, each with its MessagePartBody.
  const std::string answer = R"({"payload": {"partId": "", "mimeType": "multipart/mixed", "filename": "",
    "body": {"size": 0}, "parts": [
      {"partId": "0", "mimeType": "text/plain", "filename": "", "body": {"size": 5, "data": "aG9sYQ"}},
      {"partId": "1", "mimeType": "multipart/mixed", "filename": "", "body": {"size": 0}, "parts": [
        {"partId": "1.0", "mimeType": "application/pdf", "filename": "factura.pdf",
         "body": {"attachmentId": "ANGjdJ8", "size": 52000}}]}]}})";
  const net::HttpResult ok = net::HttpResponse{200, {}, answer};
  auto pdf = gmail::read_part(ok, "1.0");
  REQUIRE(pdf);
  REQUIRE(*pdf);
  CHECK((*pdf)->attachment_id == "ANGjdJ8");
  CHECK((*pdf)->size == 52000);
  CHECK((*pdf)->mime_type == "application/pdf");
  CHECK((*pdf)->filename == "factura.pdf");
  auto text = gmail::read_part(ok, "0");
  REQUIRE(text);
  REQUIRE(*text);
  CHECK((*text)->attachment_id.empty());
  CHECK((*text)->data == "hola");
  auto none = gmail::read_part(ok, "2");
  REQUIRE(none);
  CHECK_FALSE(*none);

  const net::HttpResult gone = net::HttpResponse{404, {}, R"({"error":{"code":404,"message":"Not Found"}})"};
  auto missing = gmail::read_part(gone, "1.0");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == ApiErrorKind::not_found);
  const net::HttpResult garbled = net::HttpResponse{200, {}, "{\"payload\": 3}"};
  auto unreadable = gmail::read_part(garbled, "1");
  REQUIRE_FALSE(unreadable);
  CHECK(unreadable.error().kind == ApiErrorKind::uncertain);
}
