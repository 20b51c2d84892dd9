#pragma once
// The reply we send by email: its subject, our Message-ID, and the RFC 5322 message itself
// (built with GMime inside reply.cpp; no GMime type appears here). Pure functions: the date
// comes in the spec, nothing reads the clock. Thread-safe.

#include <chrono>
#include <cstddef>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace dispatchd::email {

// The reply's subject. Whitespace runs (and control characters) become one space, the ends
// are trimmed, invalid UTF-8 becomes U+FFFD and the result keeps at most
// k_max_subject_points code points of the original. A subject that already starts with a
// reply prefix is kept as it is (never "Re: Re:"); the prefixes recognised, in any case,
// optionally followed by a counter "[2]" or "(2)" and then ':' or the full-width '：', are
// Re (English, Latin), AW (German), SV and VS (Nordic), RV (Spanish), RES (Portuguese),
// R (Italian), Antw (Dutch) and Odp (Polish). Anything else gets "Re: " in front; an empty
// subject gives "Re: ".
inline constexpr std::size_t k_max_subject_points = 250;
std::string reply_subject(std::string_view original_subject);

// Our Message-ID for an outbox row (without angle brackets), derived only from the row's
// idempotency key and our domain, so that it is recomputed identically after a crash and
// found again with `rfc822msgid:`. Form: "dispatchd.<key>@<domain>", where ASCII letters and
// digits of the key are kept and every other byte is written "-XX" (upper-case hex): distinct
// keys always give distinct ids, and the id is a valid dot-atom. An empty key is written "-".
// The domain is lower-cased and keeps only [a-z0-9.-] ("invalid" when nothing is left).
std::string message_id_for(std::string_view idempotency_key, std::string_view domain);

struct ReplySpec {
  std::string from_address, from_name;           // our mailbox
  std::string to_address, to_name;               // the counterpart
  std::string original_subject;                  // reply_subject() is applied to it
  std::string original_message_id;               // without <>; may be empty
  std::vector<std::string> original_references;  // without <>, oldest first
  std::string body;                              // UTF-8 plain text
  std::string message_id;                        // from message_id_for()
  std::chrono::sys_seconds date;
};

enum class ReplyErrorKind {
  bad_address,     // empty, over 254 bytes, no '@' inside it, whitespace, control or <>,;"()\ characters
  bad_message_id,  // spec.message_id is not printable ASCII with an '@' (see message_id_for)
  empty_body,      // empty or whitespace only
  body_not_utf8,
  body_too_large,  // over k_max_reply_body_bytes
  internal,        // GMime failed or memory ran out
};

// Every kind is permanent: the same spec fails the same way on every attempt.
struct ReplyError {
  ReplyErrorKind kind;
  std::string message;  // one phrase, e.g. "to address has no '@'"; never quotes the body
};

inline constexpr std::size_t k_max_reply_body_bytes = 1024 * 1024;

// The reply as one RFC 5322 message with CRLF line endings, headers: Date (spec.date, UTC),
// From, To (names RFC 2047-encoded in UTF-8 when not ASCII; names are cleaned as the
// subject is and bounded), Subject (reply_subject, RFC 2047 when not ASCII),
// Message-Id <spec.message_id>, In-Reply-To <original> and References (the original's
// References then its Message-ID, duplicates dropped, bounded to the first id plus the last
// k_max_references - 1 so the thread root survives), Auto-Submitted: auto-replied (RFC 3834,
// so other robots do not answer us), MIME-Version and Content-Type text/plain;
// charset=utf-8 with quoted-printable or base64 as GMime finds best for the body. Line
// breaks in the body (LF, CRLF or CR) become CRLF, and the body ends with one. Ids from the
// original mail that are not printable ASCII without '<' '>' (or longer than 250 bytes) are
// left out rather than refused: they came from a stranger's mailer. Never throws.
inline constexpr std::size_t k_max_references = 20;
[[nodiscard]] std::expected<std::string, ReplyError> build_reply(const ReplySpec& spec);

}  // namespace dispatchd::email
