#pragma once
// IMAP4rev1 (RFC 3501) without the I/O: reading the untagged lines a server sends for
// EXAMINE/SELECT, UID SEARCH, FETCH and IDLE, reading a tagged completion, classifying a
// refusal, and building the commands the client (client.h) sends, with every argument
// quoted or refused as RFC 3501 requires. Pure functions; thread-safe.
//
// Errors are values: Error's kind says what the caller may do (is_retryable). Readers
// take the server's untagged lines as received ("* 3 EXISTS\r\n", LF alone accepted too),
// several at once; lines of other responses among them are ignored. Untrusted input:
// numbers out of range, lines cut short and literals where none belong are `protocol`
// errors, never a crash; nothing recurses on the input's nesting.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dispatchd::imap {

// What went wrong, as the caller must tell it apart (the IMAP client's and the protocol's).
//   kind                 retryable  when
//   connection           yes        no connection, a TLS handshake cut, the connection dropped
//   timeout              yes        no answer within the settings' timeouts
//   unavailable          yes        the server said to come back later: [UNAVAILABLE], [INUSE],
//                                   [SERVERBUG], [OVERQUOTA], [LIMIT], a BYE while connected
//   protocol             yes        the server's answer could not be read
//   auth_refused         no         the credentials were refused (until they change)
//   tls_refused          no         the certificate did not verify, or STARTTLS was not offered
//   mailbox_missing      no         no such mailbox ([NONEXISTENT], [TRYCREATE], SELECT refused)
//   uidvalidity_changed  no         the mailbox's UIDVALIDITY is not the one given: every UID kept
//                                   for it is void; examine() gives the new one
//   message_missing      no         no message with that UID (expunged)
//   too_large            no         a message over the client's size limit
//   refused              no         any other NO or BAD to a command
//   unsupported          no         the server lacks what the call needs (IDLE)
//   invalid_argument     no         an argument that cannot be sent (CR, LF, NUL, 8-bit bytes in a
//                                   quoted string, a flag that is not one, a bad setting)
enum class ErrorKind {
  connection,
  timeout,
  unavailable,
  protocol,
  auth_refused,
  tls_refused,
  mailbox_missing,
  uidvalidity_changed,
  message_missing,
  too_large,
  refused,
  unsupported,
  invalid_argument,
};

// "connection", "timeout", ... as the enumerators are spelt.
std::string_view to_string(ErrorKind kind);

// Whether the same call may simply be made again later (connection, timeout, unavailable,
// protocol).
bool is_retryable(ErrorKind kind);

struct Error {
  ErrorKind kind = ErrorKind::protocol;
  // One line for the log: the command's verb and the server's words ("SELECT: NO Mailbox
  // doesn't exist: Nope"), or the transport's. Never a credential or a message's text.
  std::string message;
};

template <class T>
using Result = std::expected<T, Error>;

// ---- reading ------------------------------------------------------------------------------

// A mailbox as EXAMINE or SELECT reports it.
struct MailboxStatus {
  std::uint32_t uidvalidity = 0;  // never 0: a status without it is a protocol error
  std::uint32_t uidnext = 0;      // 0: the server did not say ([UIDNEXT] is optional)
  std::uint32_t exists = 0;
  std::vector<std::string> flags;  // * FLAGS (...), as written
  // * OK [PERMANENTFLAGS (...)], as written ("\*": new keywords may be created); nullopt
  // when the server sent none (RFC 3501: then every flag in `flags` is permanent).
  std::optional<std::vector<std::string>> permanent_flags;
};

// The status from EXAMINE's or SELECT's untagged lines. Errors (protocol): no UIDVALIDITY,
// a number out of range or a malformed bracketed code it reads.
[[nodiscard]] Result<MailboxStatus> parse_mailbox_status(std::string_view untagged);

// The UIDs of every "* SEARCH" line (RFC 3501 7.2.5), ascending, without repeats. Errors
// (protocol): no SEARCH line at all (a server must send one, empty when nothing matched), or
// a token that is not a UID.
[[nodiscard]] Result<std::vector<std::uint32_t>> parse_search(std::string_view untagged);

// One "* n FETCH (...)" line's UID and FLAGS; other attributes (MODSEQ, INTERNALDATE,
// RFC822.SIZE, ...) are skipped.
struct FetchFlags {
  std::uint32_t sequence = 0;
  std::uint32_t uid = 0;  // 0 when the line has no UID
  bool has_flags = false;
  std::vector<std::string> flags;
};
// Errors (protocol): not a FETCH line, a literal ({n}: never sent for these attributes), an
// unbalanced list or a number out of range.
[[nodiscard]] Result<FetchFlags> parse_fetch_line(std::string_view line);
// Every FETCH line among `untagged`, in order; the first malformed one is the error.
[[nodiscard]] Result<std::vector<FetchFlags>> parse_fetch(std::string_view untagged);

// One line as IDLE (and any command) may bring it.
struct Untagged {
  enum class Type { exists, recent, expunge, fetch, bye, continuation, other };
  Type type = Type::other;
  std::uint32_t number = 0;  // exists, recent, expunge, fetch
  std::string text;          // bye: the server's words
};
Untagged parse_untagged(std::string_view line);

// A command's completion: "<tag> OK|NO|BAD [code] text".
struct Tagged {
  enum class Status { ok, no, bad };
  Status status = Status::ok;
  std::string code;  // inside the brackets, as written ("APPENDUID 38505 3955"); "" for none
  std::string text;  // after the code
};
// nullopt when `line` is not `tag`'s completion (an untagged line, another tag, no status).
std::optional<Tagged> parse_tagged(std::string_view line, std::string_view tag);

// The kind of a NO or BAD to `verb` ("LOGIN", "AUTHENTICATE", "SELECT", "EXAMINE",
// "APPEND", "UID FETCH", ...): by its RFC 5530 response code first (UNAVAILABLE, INUSE,
// SERVERBUG, OVERQUOTA, LIMIT: unavailable; AUTHENTICATIONFAILED, AUTHORIZATIONFAILED,
// EXPIRED, PRIVACYREQUIRED, CONTACTADMIN: auth_refused; NONEXISTENT, TRYCREATE:
// mailbox_missing; EXPUNGEISSUED: message_missing), else by the verb (LOGIN, AUTHENTICATE:
// auth_refused; SELECT, EXAMINE, STATUS: mailbox_missing; IDLE refused: unsupported), else
// refused.
ErrorKind classify_refusal(std::string_view verb, const Tagged& completion);

// APPEND's [APPENDUID uidvalidity uid] (RFC 4315 UIDPLUS); nullopt without it.
struct AppendUid {
  std::uint32_t uidvalidity = 0;
  std::uint32_t uid = 0;
};
std::optional<AppendUid> parse_appenduid(const Tagged& completion);

// ---- building -----------------------------------------------------------------------------

// A quoted string: '"' and '\' escaped with '\'. Refuses (invalid_argument) CR, LF, NUL and
// bytes over 0x7f (RFC 3501 allows them only in literals).
[[nodiscard]] Result<std::string> quoted(std::string_view text);

// An atom when `text` is one (non-empty, no atom-specials: ( ) { SP CTL % * " \ ]), else
// quoted().
[[nodiscard]] Result<std::string> astring(std::string_view text);

// RFC 3501 5.1.3's modified UTF-7 for a mailbox name: printable ASCII stays ('&' becomes
// "&-"), anything else is "&" + modified base64 of UTF-16 + "-". Refuses (invalid_argument)
// invalid UTF-8 and control characters.
[[nodiscard]] Result<std::string> modified_utf7(std::string_view utf8);

// A mailbox name as a command argument: "INBOX" in any case is INBOX, anything else
// modified_utf7() then astring(). Refuses an empty name.
[[nodiscard]] Result<std::string> mailbox_argument(std::string_view mailbox);

// A flag list "(\Seen $Done)". Each flag is a system flag (\Seen \Answered \Flagged
// \Deleted \Draft, any case, written as RFC 3501 spells it) or a keyword atom; \Recent
// (which no client may set), any other "\X", an empty list and non-atoms are refused.
[[nodiscard]] Result<std::string> flag_list(std::span<const std::string> flags);

// The commands, without tag or CRLF.
[[nodiscard]] Result<std::string> examine_command(std::string_view mailbox);  // EXAMINE m
// UID SEARCH UID n:* (RFC 3501: "n:*" also matches the highest UID when it is below n,
// so the caller drops those with uids_from()).
std::string uid_search_from_command(std::uint32_t uid);
// UID SEARCH HEADER Message-ID "<id>": `message_id` with or without its angle brackets.
[[nodiscard]] Result<std::string> search_message_id_command(std::string_view message_id);
[[nodiscard]] Result<std::string> uid_store_add_flags_command(std::uint32_t uid, std::span<const std::string> flags);
// APPEND m (flags) {size} (a synchronizing literal follows). No flags: no list.
[[nodiscard]] Result<std::string> append_command(std::string_view mailbox, std::span<const std::string> flags,
                                                 std::size_t size);

// The UIDs of `uids` at or above `first` (see uid_search_from_command).
std::vector<std::uint32_t> uids_from(std::span<const std::uint32_t> uids, std::uint32_t first);

// `raw` with every line ending CRLF (a bare LF or CR becomes CRLF), as SMTP DATA and IMAP
// APPEND require.
std::string to_crlf(std::string_view raw);

// ---- libcurl's URLs and custom requests ---------------------------------------------------

// The path of an imap(s):// URL naming `mailbox` (modified UTF-7, then every byte outside
// RFC 3986's unreserved set percent-encoded: curl decodes it and quotes it itself).
[[nodiscard]] Result<std::string> mailbox_url_path(std::string_view mailbox);

// `command` as CURLOPT_CUSTOMREQUEST takes it: libcurl URL-decodes an IMAP custom request,
// so each '%' is written "%25". Refuses (invalid_argument) CR, LF and NUL.
[[nodiscard]] Result<std::string> curl_custom_request(std::string_view command);

}  // namespace dispatchd::imap
