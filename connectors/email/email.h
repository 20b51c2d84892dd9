#pragma once
// One inbound email, decoded: what the agent and the store keep of an RFC 5322 message.
//
// decode() reads untrusted bytes (an RFC 5322 message as a mail channel fetched it) with
// GMime: nested multiparts, base64 and quoted-printable, any charset iconv knows, RFC 2047
// encoded words (malformed ones too) and RFC 2231 parameters. HTML-only mail is reduced to readable text
// with libxml2's HTML parser. Neither library's types appear here.
//
// Error contract, for the connector:
//  - decode() returns an error only when there is no message to speak of: the input is
//    larger than DecodeLimits::max_bytes (too_large), or empty / not read as a message at
//    all (not_a_message).
//  - Anything it can still read comes back as an Email, with one short phrase per problem
//    in `defects` ("bad boundary", "unknown charset x-foo", "nesting deeper than 16", ...).
//  - The connector stores the raw bytes either way and escalates `undecodable` when decode()
//    returns an error OR the Email's `text` is empty while `defects` is not (a body it could
//    not read). An empty text without defects is an empty message and is not escalated.
//    A message with no text part at all (an attachment alone, multipart/encrypted) carries
//    the defect "no text part", so it is escalated: the model would have nothing to read.
// Thread-safety: decode() may run on several threads at once (GMime is initialized once,
// under std::call_once). It never throws and never recurses on the input's nesting.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dispatchd::email {

struct Address {
  std::string name;     // display name, decoded; "" when none
  std::string address;  // addr-spec as written (for comparisons, lower-case it)
};

struct Attachment {
  std::string name;      // filename (RFC 2231 / RFC 2047 decoded); "" when none
  std::string type;      // "application/pdf", "message/rfc822", ...
  std::size_t size = 0;  // decoded bytes
  // Where the part is in the MIME tree: the index of each multipart's child from the
  // message's own part down, from 0 ({} for a message that is this part alone). A mail
  // channel names the part to its server by it (Gmail's partId "1.0", IMAP's section "2.1").
  std::vector<int> path;
  bool leaf = true;  // a part of its own bytes; false for a forwarded message (message/rfc822)
  // Its Content-Transfer-Encoding, lower-case ("base64", "quoted-printable", "7bit", ...);
  // "" when it declares none. What a channel that fetches the part's bytes as sent decodes.
  std::string encoding;
};

// Why loop prevention may ignore a message (see is_automatic).
struct Flags {
  bool auto_reply = false;  // Auto-Submitted other than "no", X-Autoreply, X-Autorespond,
                            // Precedence bulk / junk / auto_reply
  bool list = false;        // List-Id, List-Unsubscribe, Precedence list
  bool bounce = false;      // From MAILER-DAEMON / postmaster, multipart/report, or
                            // Return-Path <> with a message/delivery-status part
  bool own = false;         // From one of our own addresses
  bool no_reply = false;    // From no-reply@, noreply@, do-not-reply@, donotreply@ and variants
};

struct Email {
  std::optional<Address> from, reply_to;
  std::vector<Address> to, cc;                   // groups are flattened into their members
  std::string subject;                           // decoded (RFC 2047), UTF-8
  std::optional<std::chrono::sys_seconds> date;  // Date: in UTC; nullopt if absent, or unparseable (+ a defect)
  std::string message_id, in_reply_to;           // without angle brackets
  std::vector<std::string> references;           // without angle brackets, in order
  // What the model sees: the chosen body as valid UTF-8 with LF line ends, the quoted history
  // of a reply trimmed, cut at DecodeLimits::max_text_bytes. Attachments are never in it.
  std::string text;
  std::string full_text;  // the chosen body before trimming and cutting (kept in the store)
  std::vector<Attachment> attachments;
  Flags flags;
  std::vector<std::string> defects;  // one short phrase each, in the order found
};

struct DecodeLimits {
  std::size_t max_bytes = 35u << 20;       // larger raw input: error too_large
  int max_depth = 16;                      // deeper nesting: parts below are not walked (+ defect)
  int max_parts = 256;                     // more parts: the rest not walked (+ defect)
  std::size_t max_text_bytes = 64u << 10;  // `text` cut (at a UTF-8 boundary) beyond this (+ defect)
};

enum class DecodeErrorKind { too_large, not_a_message };
struct DecodeError {
  DecodeErrorKind kind;
  std::string message;  // one line, for logs and dispatchctl
};
const char* to_string(DecodeErrorKind kind);

// Decodes one RFC 5322 message. `own_addresses`: our mailbox address(es), for flags.own
// (compared case-insensitively). Never throws, never crashes; see the contract above.
[[nodiscard]] std::expected<Email, DecodeError> decode(std::string_view raw,
                                                       std::span<const std::string> own_addresses = {},
                                                       const DecodeLimits& limits = {});

// The counterpart (docs/channels.md: Reply-To when present, else From), lower-cased address; "" if none.
std::string counterpart(const Email& email);

// Whether loop prevention ignores it by default: own || auto_reply || list || bounce || no_reply.
bool is_automatic(const Flags& flags);

// One compact JSON object, as `dispatchctl inspect email` prints it: from, reply_to
// ({name,address} or null), to, cc, subject, date ("2026-11-30T12:00:00Z" or null),
// message_id, in_reply_to, references, text, attachments ([{name,type,size}]),
// flags ({auto_reply,list,bounce,own,no_reply}), defects. `full_text` is not in it.
std::string to_json(const Email& email);

}  // namespace dispatchd::email
