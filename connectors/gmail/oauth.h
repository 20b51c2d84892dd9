#pragma once
// Google's OAuth2 refresh-token grant, and a cache of the access token it gives.
//
//   POST {token_url}                      Content-Type: application/x-www-form-urlencoded
//   client_id=..&client_secret=..&refresh_token=..&grant_type=refresh_token
//   200 {"access_token":"ya29…","expires_in":3599,"scope":"…","token_type":"Bearer"}
//   400 {"error":"invalid_grant","error_description":"Token has been expired or revoked."}
//   401 {"error":"invalid_client","error_description":"The OAuth client was not found."}
//
//   kind            when                                                   the connector
//   invalid_grant   error "invalid_grant": the refresh token was revoked   pauses until new
//                   or expired                                             credentials (reset)
//   invalid_client  any other OAuth error a 4xx names (invalid_client,     pauses until new
//                   unauthorized_client, invalid_request…): the client     credentials (reset)
//                   id/secret or the request were refused
//   unavailable     429, 408, 5xx, a 4xx without an OAuth error body, or   retries later with
//                   any transport failure                                  backoff
//   malformed       2xx without a usable access_token / expires_in         retries later
//
// Secrets (client secret, refresh token, access token) never appear in an OAuthError's
// message: it is built from the status and Google's error code and description (quoted and
// bounded), and any secret found in them is replaced by "[redacted]".

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "net/http.h"

namespace dispatchd::gmail {

struct OAuthCredentials {
  std::string token_url;  // the full URL: "https://oauth2.googleapis.com/token"
  std::string client_id;
  std::string client_secret;
  std::string refresh_token;
};

enum class OAuthErrorKind { invalid_grant, invalid_client, unavailable, malformed };

// "invalid_grant", "invalid_client", "unavailable", "malformed".
std::string_view to_string(OAuthErrorKind kind);

// invalid_grant and invalid_client: nothing but new credentials helps.
bool permanent(OAuthErrorKind kind);

struct OAuthError {
  OAuthErrorKind kind = OAuthErrorKind::unavailable;
  std::string message;  // one line for logs and /readyz; never contains a secret
};

struct AccessToken {
  std::string token;
  std::chrono::seconds expires_in{0};
};

// The grant request, with connect 10 s and 30 s timeouts.
net::HttpRequest refresh_request(const OAuthCredentials& credentials);

// Reads the answer to refresh_request by the table above. An access token that is empty,
// longer than 8 KiB or holds anything but printable ASCII without spaces (it goes into a
// header), a token_type other than Bearer (any case), or an expires_in that is not a
// positive integer is malformed. `credentials` only serves to redact the message.
[[nodiscard]] std::expected<AccessToken, OAuthError> read_refresh_response(const net::HttpResult& result,
                                                                           const OAuthCredentials& credentials);

// How long a token of lifetime `expires_in`, asked for at `requested_at`, is used: until
// expires_in minus 60 s, or minus 10% of it when that is shorter (a 30 s token: 27 s).
std::chrono::steady_clock::time_point usable_until(std::chrono::steady_clock::time_point requested_at,
                                                   std::chrono::seconds expires_in);

using TokenDone = std::move_only_function<void(std::expected<std::string, OAuthError>)>;
// Runs a function later on the event loop (connectors::Post, ChannelDeps::post).
using PostFn = std::function<void(std::move_only_function<void()>)>;
using SteadyNow = std::function<std::chrono::steady_clock::time_point()>;

// The access token for the Gmail API calls. Threading: the loop's thread only.
//
// get(done) answers the cached token while usable_until() has not passed (the clock is
// `now`, injected); else it sends one refresh request, and every get() until its answer
// waits for that same request. `done` is called exactly once, never from inside get():
// a cached token or a remembered permanent error is posted through `post`, a refresh's
// result comes from the transport's completion. A failed refresh is answered to every
// waiter and not retried here: the next get() tries again (the caller backs off). After
// invalid_grant or invalid_client, get() answers that error without any request until
// reset(). Destroying the source with a refresh in flight destroys the waiters' `done`
// uncalled.
class TokenSource {
 public:
  // REQUIRES: `transport` outlives the source; `post` and `now` are callable.
  TokenSource(net::Transport& transport, OAuthCredentials credentials, SteadyNow now, PostFn post);
  ~TokenSource();
  TokenSource(const TokenSource&) = delete;
  TokenSource& operator=(const TokenSource&) = delete;

  void get(TokenDone done);

  // The API refused the token (401): the next get() refreshes.
  void invalidate();
  // The same, only when `refused` is still the cached token: a 401 for a token that
  // another caller already replaced forgets nothing.
  void invalidate(std::string_view refused);

  // New credentials (a reload): forgets the token and any permanent error. A refresh in
  // flight is abandoned and its waiters are answered by a new one with these credentials.
  void reset(OAuthCredentials credentials);

  // The invalid_grant / invalid_client error that pauses the connector; cleared by reset().
  std::optional<OAuthError> last_permanent_error() const;

  struct State;  // opaque; public only for the .cpp's callbacks

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::gmail
