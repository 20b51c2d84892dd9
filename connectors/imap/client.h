#pragma once
// A blocking IMAP4rev1 client over libcurl (no curl type here), for a thread of its own:
// every call waits for the server, bounded by the settings' timeouts. Not thread-safe: one
// thread at a time per Client (several Clients may run on several threads).
//
// Two connections, each opened on first use and kept for the next calls:
//  - curl's own (URL operations): search_uids_from, fetch_raw, fetch_flags, add_flags and
//    search_message_id name the mailbox in the URL ("imaps://host:993/INBOX;UIDVALIDITY=v"),
//    curl SELECTs it (read-write) when not already selected and refuses a UIDVALIDITY other
//    than the one given (uidvalidity_changed) before running the command;
//  - a watch connection (curl's CONNECT_ONLY: greeting, CAPABILITY, STARTTLS and login by
//    curl, then the client's own commands on it): examine, append and idle. A watch
//    connection found dead when a command starts (reused after a pause) is opened again once.
//
// libcurl's own reports (7.88) and how the client reads them: CURLE_LOGIN_DENIED is a
// refused login and also a refused SELECT (the client notes the verb of each command curl
// sends, never its arguments, and the server's tagged answer, and classify_refusal() tells
// them apart); CURLE_REMOTE_FILE_NOT_FOUND after SELECT is curl refusing the URL's
// UIDVALIDITY ("Mailbox UIDVALIDITY has changed"), after UID FETCH no such message;
// CURLE_QUOTE_ERROR a custom command (UID SEARCH, UID STORE) answered NO or BAD.
//
// Errors: protocol.h's Error; is_retryable(kind) says whether to try again later. A server
// gone (Dovecot stopped) is `connection`; refused credentials `auth_refused`; a certificate
// that does not verify against ServerSettings::ca_file `tls_refused`; a missing mailbox
// `mailbox_missing`. Settings check_settings() refuses are `invalid_argument` on every call.
// A failed call drops its connection (the next call opens a new one) unless the server only
// refused the command.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/imap/protocol.h"
#include "connectors/imap/settings.h"

namespace dispatchd::imap {

// A fetched message larger than this is too_large (the decoder refuses 35 MiB anyway).
inline constexpr std::size_t k_max_fetch_bytes = 64u << 20;
// IDLE is ended and started again at least this often (RFC 2177: before 29 minutes).
inline constexpr std::chrono::minutes k_max_idle{25};

class Client {
 public:
  explicit Client(ServerSettings settings);
  ~Client();  // LOGOUT on the watch connection (not waited for), both connections closed
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;

  // EXAMINE on the watch connection: the mailbox's UIDVALIDITY, UIDNEXT, EXISTS, FLAGS and
  // PERMANENTFLAGS. idle() counts what arrives from this point on (see idle()).
  [[nodiscard]] Result<MailboxStatus> examine(std::string_view mailbox);

  // The UIDs in `mailbox` at or above `uid`, ascending (UID SEARCH UID uid:*, without the
  // highest UID RFC 3501 adds when every UID is below `uid`). uidvalidity_changed when the
  // mailbox's UIDVALIDITY is not `uidvalidity`.
  [[nodiscard]] Result<std::vector<std::uint32_t>> search_uids_from(std::string_view mailbox, std::uint32_t uidvalidity,
                                                                    std::uint32_t uid);

  // The message's raw bytes (UID FETCH uid BODY[], which sets \Seen on it: curl does not
  // PEEK). uidvalidity_changed when UIDVALIDITY is not `uidvalidity`; message_missing when
  // no message has that UID; too_large beyond k_max_fetch_bytes.
  [[nodiscard]] Result<std::string> fetch_raw(std::string_view mailbox, std::uint32_t uidvalidity, std::uint32_t uid);
  // One MIME part of the message as sent, its transfer encoding not undone (UID FETCH uid
  // BODY[section]; `section` as IMAP numbers parts: "2", "2.1"). Errors as fetch_raw's;
  // too_large beyond `max_bytes` (at most k_max_fetch_bytes).
  [[nodiscard]] Result<std::string> fetch_section(std::string_view mailbox, std::uint32_t uidvalidity,
                                                  std::uint32_t uid, std::string_view section, std::size_t max_bytes);

  // UID STORE uid +FLAGS.SILENT (flags): adds the flags (protocol.h's flag_list() rules). A
  // UID no longer in the mailbox is not an error (the server ignores it).
  [[nodiscard]] Result<void> add_flags(std::string_view mailbox, std::uint32_t uidvalidity, std::uint32_t uid,
                                       std::span<const std::string> flags);

  // The message's flags (UID FETCH uid (UID FLAGS)), as the server writes them.
  // uidvalidity_changed as above; message_missing when no message has that UID.
  [[nodiscard]] Result<std::vector<std::string>> fetch_flags(std::string_view mailbox, std::uint32_t uidvalidity,
                                                             std::uint32_t uid);

  // APPEND on the watch connection, with `flags` (none: the server's default, no \Seen) and
  // `raw`'s line ends made CRLF; the new message's UID when the server has UIDPLUS (RFC
  // 4315), else nullopt. A NUL byte in `raw` is invalid_argument; a missing mailbox
  // mailbox_missing (the server's [TRYCREATE]).
  [[nodiscard]] Result<std::optional<AppendUid>> append(std::string_view mailbox, std::string_view raw,
                                                        std::span<const std::string> flags);

  // The UIDs of the messages in `mailbox` whose Message-ID header holds `message_id` (with or
  // without its angle brackets), ascending (UID SEARCH HEADER Message-ID "<id>").
  [[nodiscard]] Result<std::vector<std::uint32_t>> search_message_id(std::string_view mailbox,
                                                                     std::string_view message_id);

  // Waits on the watch connection for mail to arrive in `mailbox`, at most `timeout` (capped
  // at k_max_idle): true as soon as the server reports more messages than this connection
  // last knew of (an EXISTS above its count), false when the time passed quietly. Counts
  // from the last examine() of `mailbox` (or the EXAMINE idle() runs itself when the
  // connection has another mailbox, or none): a message that arrived since is reported at
  // once (a NOOP before IDLE brings the server's pending news; after a reconnection, a
  // UIDNEXT beyond examine()'s). unsupported when the server refuses IDLE (poll instead).
  // Interrupted (interrupter()): false at once, and from then on without waiting.
  [[nodiscard]] Result<bool> idle(std::string_view mailbox, std::chrono::milliseconds timeout);

  // A function that ends idle()'s wait at once and any other call's transfer within about a
  // second (a `connection` error), from any thread, for good: the thread that runs the
  // client is to be joined (shutdown). Safe to call after the client is gone.
  std::function<void()> interrupter();

  // Closes both connections (the next call opens new ones).
  void disconnect();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace dispatchd::imap
