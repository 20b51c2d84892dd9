#pragma once
// A mail's attachments as customers' files, for a mailbox read over IMAP (docs/media.md,
// "IMAP"): which of a decoded mail's attachments become its store::MediaRef, how a file is
// named to the server, and the pure parts of its download (ImapChannel::fetch_media runs
// Client::fetch_section on the mailbox's send worker and hands the bytes over on the loop).
//
// A file's provider_ref names the mailbox, the message and the part:
// "<mailbox name>/<UIDVALIDITY>/<UID>/<section>/<transfer encoding>", the section as IMAP
// numbers it (RFC 3501: "2" the second part of a multipart mail, "2.1" the first inside it,
// "1" a mail that is its attachment alone). The part comes as sent (UID FETCH uid BODY[section])
// and its Content-Transfer-Encoding is undone here (base64, quoted-printable; 7bit, 8bit and
// binary as they are).
//
//   the fetch                                        the outcome (fetch_failure)
//   message_missing, uidvalidity_changed             expired (the UID names nothing any more)
//   too_large (past the cap's encoded size)          too_large
//   connection, timeout, unavailable, protocol,      retry
//   auth_refused, tls_refused (the mailbox paused)
//   anything else                                    refused
//   an encoding not undone, or bytes not of it       refused

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/channel.h"
#include "connectors/email/email.h"
#include "connectors/imap/protocol.h"
#include "store/inbox.h"

namespace dispatchd::imap {

struct PartRef {
  std::string mailbox;  // MailboxSettings::name
  std::uint32_t uidvalidity = 0;
  std::uint32_t uid = 0;
  std::string section;   // "1", "2.1"
  std::string encoding;  // lower-case; "" for none declared
};

// IMAP's section of the part at `path` (email::Attachment::path): each index plus one,
// joined by '.'; "1" for the message's own part.
std::string section_of(std::span<const int> path);

std::string part_ref(const PartRef& ref);
// nullopt unless it is what part_ref writes: a mailbox name of [a-z0-9_-], non-zero
// UIDVALIDITY and UID, a section of dot-separated positive numbers, an encoding of
// [a-z0-9-] (or none).
std::optional<PartRef> parse_part_ref(std::string_view text);

// The files of a mail read from `mailbox` under (uidvalidity, uid): as gmail::media_of, each
// attachment that is a part of its own bytes.
std::vector<store::MediaRef> media_of(const email::Email& mail, std::string_view mailbox, std::uint32_t uidvalidity,
                                      std::uint32_t uid);

// The part's bytes with its transfer encoding undone: base64 (line breaks and other
// whitespace skipped, padding optional), quoted-printable (soft line breaks joined, =XX
// decoded, a malformed = kept as written), 7bit, 8bit, binary and "" unchanged. Any other
// encoding, or base64 that is not, is an error (one line).
std::expected<std::string, std::string> decode_transfer(std::string_view encoding, std::string_view bytes);

// What a failed fetch becomes (the table above).
connectors::MediaFetchResult fetch_failure(const Error& error);

}  // namespace dispatchd::imap
