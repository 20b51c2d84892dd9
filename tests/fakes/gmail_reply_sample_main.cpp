// gmail_reply_sample: prints one reply built by dispatchd::email::build_reply (CRLF line
// endings, nothing else on stdout), so that tests/connectors/gmail_reply_parse_test.py can
// check it with a standard parser (Python's email package). The spec is fixed and uses
// non-ASCII in the subject, the names and the body. Exit 0, or 1 when the build is refused.

#include <chrono>
#include <iostream>

#include "connectors/email/reply.h"

int main() {
  using namespace dispatchd::email;
  ReplySpec spec;
  spec.from_address = "support@example.com";
  spec.from_name = "Soporte Ñandú";
  spec.to_address = "jose.perez@example.org";
  spec.to_name = "José \"Pepe\" Pérez";
  spec.original_subject = "¿Dónde está mi pedido nº 42?";
  spec.original_message_id = "CAF=orig-42@mail.example.org";
  spec.original_references = {"root-1@mail.example.org", "CAF=mid-2@mail.example.org"};
  spec.body = "Hola José,\n\nsu pedido nº 42 salió ayer — llega el jueves.\nご注文ありがとうございます。\n\nSoporte";
  spec.message_id = message_id_for("outbox/42#1", "example.com");
  spec.date = std::chrono::sys_seconds(std::chrono::seconds(1764600000));
  const auto message = build_reply(spec);
  if (!message) {
    std::cerr << "gmail_reply_sample: " << message.error().message << "\n";
    return 1;
  }
  std::cout << *message;
  return 0;
}
