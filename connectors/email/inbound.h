#pragma once
// What a mail channel makes of a decoded message (pure; table-tested): its inbox type and
// the text the model reads. Every mail channel uses these, so that the same mail is typed and
// shown alike whichever mailbox it came through.

#include <expected>
#include <span>
#include <string>
#include <string_view>

#include "common/message_types.h"
#include "connectors/email/email.h"

namespace dispatchd::email {

// Why loop prevention would ignore it, the strongest reason first ("own", "bounce",
// "auto_reply", "list", "no_reply"), else "email"; the agent's type rules
// (connectors.<channel>.message_types) decide what each type gets.
std::string inbox_type(const Flags& flags);

// "Subject: <subject>\n[Attachments (not shown): name (type, size); ...\n]\n<text>"
std::string model_text(const Email& email);

// What a mail channel stores of one fetched message (its raw bytes are stored beside it
// either way): the counterpart, the model's text and the inbox type. When decode() fails, or
// finds defects and no readable text nor attachment, the type is "undecodable" and the text
// says why (the message is escalated, see email.h's error contract).
struct Inbound {
  std::string sender;  // counterpart(); "" when not even the headers could be read
  std::string text;
  std::string type;
  bool undecodable = false;
};
Inbound read_inbound(std::string_view raw, std::span<const std::string> own_addresses);
// The same of a message already decoded (decode()'s result, its error included).
Inbound read_inbound(const std::expected<Email, DecodeError>& email);

// The message types every mail channel gives: "email" to the model; "own", "auto_reply",
// "list", "bounce", "no_reply" (loop prevention) ignored; "undecodable" escalated.
const common::MessageTypes& mail_types();

}  // namespace dispatchd::email
