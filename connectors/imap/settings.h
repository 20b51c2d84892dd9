#pragma once
// How the IMAP client (client.h) and the SMTP client (smtp.h) reach a mail server: its
// address, TLS, credentials and timeouts. Plain data; check_settings() says what is wrong
// with one before any connection is tried.
//
// TLS is always on and always verified (the peer's certificate against `ca_file`, or the
// system's store when it is empty, and its name or IP against `host`), TLS 1.2 at least:
//   implicit   TLS from the first byte: imaps:// (port 993) and smtps:// (port 465)
//   starttls   the plain port, then STARTTLS, required: a server that does not offer it is
//              refused (tls_refused) before any credential is sent (143 and 587)
// Authentication is SASL as the server offers it: with `oauth_token` the bearer token
// (XOAUTH2 or OAUTHBEARER), else the password (PLAIN or LOGIN; IMAP's LOGIN command when the
// server offers no SASL). `sasl_mechanism` forces one ("PLAIN", "LOGIN", "XOAUTH2",
// "OAUTHBEARER").

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace dispatchd::imap {

enum class TlsMode { implicit, starttls };

struct ServerSettings {
  std::string host;        // a name, an IPv4 address or an IPv6 address (without brackets)
  std::uint16_t port = 0;  // 0: the protocol's and TLS mode's port (993, 143, 465, 587)
  TlsMode tls = TlsMode::implicit;
  std::string user;            // the SASL authentication identity (the mailbox's address, usually)
  std::string password;        // used when oauth_token is empty
  std::string oauth_token;     // an OAuth 2.0 access token: SASL XOAUTH2 / OAUTHBEARER
  std::string sasl_mechanism;  // "" the best of those the server offers; else that one only
  std::string ca_file;         // PEM file of the CAs to trust; "" the system's store
  std::chrono::milliseconds connect_timeout{15'000};     // TCP, TLS, greeting and login
  std::chrono::milliseconds io_timeout{60'000};          // a server silent for this long: timeout
  std::chrono::milliseconds operation_timeout{300'000};  // one call, whole (a large fetch or send)
};

// What is wrong with `settings` ("host is empty", "sasl_mechanism must be PLAIN, LOGIN,
// XOAUTH2 or OAUTHBEARER", CR or LF in the user or a credential, a timeout not positive...),
// nullopt when nothing is. Does not check that the CA file exists (a connection does).
std::optional<std::string> check_settings(const ServerSettings& settings);

}  // namespace dispatchd::imap
