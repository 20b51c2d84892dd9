// What a mail channel makes of a decoded message (connectors/email/inbound.h): its inbox type,
// the model's text, and what is stored of a message that cannot be read.
#include <catch2/catch.hpp>
#include <string>

#include "connectors/email/inbound.h"

using namespace dispatchd;

TEST_CASE("email inbound: the inbox type, the strongest reason first", "[email]") {
  struct Row {
    email::Flags flags;
    const char* type;
  };
  const std::vector<Row> table{
      {{}, "email"},
      {{.auto_reply = true}, "auto_reply"},
      {{.list = true}, "list"},
      {{.bounce = true}, "bounce"},
      {{.own = true}, "own"},
      {{.no_reply = true}, "no_reply"},
      {{.auto_reply = true, .list = true}, "auto_reply"},  // a list's vacation notice
      {{.auto_reply = true, .bounce = true}, "bounce"},
      {{.list = true, .own = true}, "own"},  // our own mail through a list
      {{.list = true, .no_reply = true}, "list"},
  };
  for (const auto& row : table) CHECK(email::inbox_type(row.flags) == row.type);
}

TEST_CASE("email inbound: the model reads the subject, attachments by name, the body", "[email]") {
  email::Email mail;
  mail.subject = "Envío a Monterrey";
  mail.text = "¿Tienen envío?";
  CHECK(email::model_text(mail) == "Subject: Envío a Monterrey\n\n¿Tienen envío?");
  mail.attachments = {
      {"factura.pdf", "application/pdf", 120'000}, {"foto.jpg", "image/jpeg", 3u << 20}, {"", "text/x-vcard", 12}};
  CHECK(email::model_text(mail) ==
        "Subject: Envío a Monterrey\nAttachments (not shown): factura.pdf (application/pdf, 117 KB); foto.jpg "
        "(image/jpeg, 3 MB);  (text/x-vcard, 12 bytes);\n\n¿Tienen envío?");
}

TEST_CASE("email inbound: a readable message and one that is not", "[email]") {
  const std::string own[] = {"soporte@example.com"};
  const auto read = email::read_inbound(
      "From: Ana <Ana@Example.COM>\r\nTo: soporte@example.com\r\nSubject: Hola\r\nMessage-ID: <a1@example.com>\r\n"
      "Content-Type: text/plain; charset=utf-8\r\n\r\nMi pedido no llega.\r\n",
      own);
  CHECK_FALSE(read.undecodable);
  CHECK(read.sender == "ana@example.com");
  CHECK(read.type == "email");
  CHECK(read.text == "Subject: Hola\n\nMi pedido no llega.");

  const auto ours = email::read_inbound(
      "From: soporte@example.com\r\nTo: ana@example.com\r\nSubject: Re: Hola\r\n\r\nYa va.\r\n", own);
  CHECK(ours.type == "own");

  const auto empty = email::read_inbound("", own);
  CHECK(empty.undecodable);
  CHECK(empty.type == "undecodable");
  CHECK(empty.sender.empty());
  CHECK_THAT(empty.text, Catch::StartsWith("(an email that could not be decoded: "));

  // Headers read, no readable body: the sender is known, the message is still undecodable.
  const auto encrypted = email::read_inbound(
      "From: ana@example.com\r\nSubject: x\r\nContent-Type: multipart/encrypted; boundary=b\r\n\r\n--b\r\n"
      "Content-Type: application/octet-stream\r\n\r\nxx\r\n--b--\r\n",
      own);
  CHECK(encrypted.undecodable);
  CHECK(encrypted.sender == "ana@example.com");
}
