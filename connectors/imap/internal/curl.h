#pragma once
#ifndef DISPATCHD_INTERNAL_CONNECTORS
#error "connectors/imap/internal/ is private to connectors/: include the module's public headers instead"
#endif
// What the IMAP and SMTP clients share of libcurl (internal): one-time initialisation, an
// easy handle's lifetime, the URL of a server, and the options every transfer gets from
// ServerSettings (TLS always verified, credentials, timeouts).

#include <curl/curl.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "connectors/imap/settings.h"

namespace dispatchd::imap::detail {

// curl_global_init, once per process (thread-safe). Throws std::runtime_error when it fails.
void curl_init_once();

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
using Easy = std::unique_ptr<CURL, EasyDeleter>;

// A new easy handle (curl_init_once first). Throws std::bad_alloc when curl has no memory.
Easy new_easy();

enum class Scheme { imap, smtp };

// "imaps://host:port" (implicit TLS) or "imap://host:port" (STARTTLS), likewise smtp(s);
// an IPv6 host in brackets; the port from the settings or the scheme's default.
std::string server_url(const ServerSettings& settings, Scheme scheme);

// Sets on `easy` what every transfer to that server needs: TLS required and verified
// (CURLOPT_USE_SSL all, CAINFO, TLS 1.2 at least), the credentials (user and password, or
// the bearer token; the forced SASL mechanism), the timeouts, no signals, TCP keep-alive.
// `error` (CURL_ERROR_SIZE bytes) receives curl's own words for a failure.
void apply_settings(CURL* easy, const ServerSettings& settings, char* error);

// Ends a transfer of `easy` within about a second once `*stop` is true (curl's progress
// callback: CURLE_ABORTED_BY_CALLBACK), so that a thread blocked in one can be joined.
// detach_callbacks() takes it off again.
void abort_when(CURL* easy, const std::atomic<bool>* stop);

// Closes `easy`'s kept connection, if any, and the handle, without waiting for a goodbye:
// curl says QUIT or LOGOUT when it closes a connection and waits for the answer, which a
// server that stopped answering (the reason a transfer failed or was ended) never gives.
// The socket is shut down first, so that curl's goodbye fails at once.
void drop_quietly(Easy& easy);

// Points `easy`'s callbacks and error buffer away from the caller's data, after a transfer:
// curl still speaks on a kept connection when it closes it (LOGOUT, QUIT at cleanup, or when
// the next transfer finds it dead), and would call back into objects gone by then.
void detach_callbacks(CURL* easy);

// The words for a failed transfer: curl's error buffer when it has any, else its strerror.
std::string curl_words(CURLcode code, const char* error);

// Whether `code` says the TLS peer or set-up was refused for good: the certificate did not
// verify, the CA file could not be read, STARTTLS was not offered.
bool is_tls_refusal(CURLcode code);

}  // namespace dispatchd::imap::detail
