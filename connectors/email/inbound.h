#pragma once
// What a mail channel makes of a decoded message (pure; table-tested): its inbox type and
// the text the model reads. Every mail channel uses these, so that the same mail is typed and
// shown alike whichever mailbox it came through.

#include <expected>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/message_types.h"
#include "connectors/email/email.h"
#include "store/inbox.h"

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

// A mail's files (docs/media.md): each attachment that is a part of its own bytes (a forwarded
// message/rfc822 is not: its text is in the raw mail), its kind by media/policy.h's rule for a
// mail attachment's content type, its declared type and file name; `provider_ref` names it to
// the channel's server (the Gmail partId, the IMAP section).
std::vector<store::MediaRef> media_of(const Email& mail,
                                      const std::function<std::string(const Attachment&)>& provider_ref);

// The message types every mail channel gives: "email" to the model; "own", "auto_reply",
// "list", "bounce", "no_reply" (loop prevention) ignored; "undecodable" escalated.
const common::MessageTypes& mail_types();

}  // namespace dispatchd::email
