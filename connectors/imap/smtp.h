#pragma once
// SMTP submission (RFC 6409) over libcurl (no curl type here): one raw RFC 5322 message to
// its envelope's recipients, with STARTTLS (port 587) or implicit TLS (465), AUTH as
// settings.h says. Blocking, for a thread of its own; not thread-safe (one thread at a time
// per SmtpClient). The connection is kept for the next send when the server allows it.
//
// The outcome, as the channel contract needs it (connectors/channel.h: a send is Sent,
// RetryAfter, Failed or Unknown). libcurl reports SMTP failures as follows (7.88, as seen
// against Postfix and tests/fakes/fake_smtp.py), and the client reads them so:
//
//   libcurl                                  when                          SmtpErrorKind
//   CURLE_LOGIN_DENIED, reply 535/534/5xx    AUTH refused                  auth_refused
//   CURLE_LOGIN_DENIED, reply 334            XOAUTH2's error challenge:    auth_refused
//                                            the token was refused         (reply_code 0)
//   CURLE_LOGIN_DENIED, reply 4xx (454)      AUTH failed for now           temporary
//   CURLE_PEER_FAILED_VERIFICATION,          the certificate did not       tls_refused
//   CURLE_SSL_CACERT_BADFILE,                verify, the CA file is bad,
//   CURLE_USE_SSL_FAILED                     STARTTLS was not offered
//   CURLE_SEND_ERROR, reply 4xx              MAIL, RCPT or DATA refused    temporary (reply_code)
//   CURLE_SEND_ERROR, reply 5xx              MAIL, RCPT or DATA refused    rejected (reply_code)
//   CURLE_WEIRD_SERVER_REPLY,                the end of data answered      temporary / rejected
//   reply 4xx / 5xx after the data           with a refusal                (reply_code)
//   CURLE_COULDNT_CONNECT, _SEND_ERROR,      no connection, or it broke    temporary
//   _RECV_ERROR, _OPERATION_TIMEDOUT,        before the whole message was
//   _GOT_NOTHING, _SSL_CONNECT_ERROR ...     handed over
//   any failure without a reply, after the   the server may have queued it unknown
//   whole message was handed over (curl:     before the connection broke
//   CURLE_RECV_ERROR, last reply 354;
//   CURLE_OPERATION_TIMEDOUT)
//
// CURLINFO_RESPONSE_CODE holds the last reply's code; the client also keeps the server's
// reply lines (curl hands them to its header callback) to tell a refusal after the data
// from one before it. "Handed over": curl has read the message's last byte from the
// client (its read callback returned the end), so it sends the terminating "." next; until
// then the server cannot have accepted it. curl does the dot-stuffing.
//
// Channel outcomes: temporary -> RetryAfter; rejected -> Failed; auth_refused and
// tls_refused -> not sent, the channel pauses (Health) until the credentials or settings
// change; invalid_argument -> Failed; unknown -> Unknown (never sent again by itself).

#include <expected>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "connectors/imap/settings.h"

namespace dispatchd::imap {

enum class SmtpErrorKind {
  temporary,         // not sent: a 4xx reply, or the connection failed before the message was handed over
  rejected,          // not sent: a 5xx reply (a sender, recipient or message refused)
  auth_refused,      // not sent: the credentials were refused
  tls_refused,       // not sent: the certificate did not verify, or STARTTLS was not offered
  invalid_argument,  // not sent: an address or setting that cannot be sent
  unknown,           // the whole message was handed over, then no answer: it may have been delivered
};

// "temporary", "rejected", ... as spelt above.
std::string_view to_string(SmtpErrorKind kind);

struct SmtpError {
  SmtpErrorKind kind = SmtpErrorKind::temporary;
  int reply_code = 0;   // the server's refusal (550, 451, 535...); 0 when there was none
  std::string message;  // one line: the server's reply or curl's words; never a credential
};

// Whether the message certainly did not leave: every kind but unknown.
bool certainly_not_sent(const SmtpError& error);

struct SmtpAccepted {
  int reply_code = 250;
  std::string reply;  // the server's last reply line, e.g. "250 2.0.0 Ok: queued as 1709BBB8633"
};

class SmtpClient {
 public:
  // `ehlo_domain`: the name given in EHLO ("" libcurl's default: this machine's name).
  explicit SmtpClient(ServerSettings settings, std::string ehlo_domain = "");
  ~SmtpClient();
  SmtpClient(const SmtpClient&) = delete;
  SmtpClient& operator=(const SmtpClient&) = delete;
  SmtpClient(SmtpClient&&) noexcept;
  SmtpClient& operator=(SmtpClient&&) noexcept;

  // Sends `raw` (its line ends made CRLF) with MAIL FROM:<from> and one RCPT TO per
  // recipient; any recipient refused refuses the whole send (nothing is sent). Addresses
  // are ASCII without CR, LF, spaces or <>; anything else, no recipient, or a NUL byte in
  // `raw` is invalid_argument.
  [[nodiscard]] std::expected<SmtpAccepted, SmtpError> send(std::string_view from,
                                                            std::span<const std::string> recipients,
                                                            std::string_view raw);

  // Closes the kept connection.
  void disconnect();

  // A function that ends a send in progress within about a second, from any thread, for
  // good (every later send fails at once): the thread that runs the client is to be joined.
  // What it ends is classified as any broken connection: temporary before the whole
  // message was handed over, unknown after. Safe to call after the client is gone.
  std::function<void()> interrupter();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace dispatchd::imap
