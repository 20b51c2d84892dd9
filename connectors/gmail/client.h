#pragma once
// An authorized Gmail API call: a token from the TokenSource, the request made with it and
// sent, and on a 401 the token invalidated, refreshed and the request made and sent again,
// once. The final transport result is handed back as it came (a second 401 included), for
// api.h's readers to classify; a token that could not be had is the OAuthError.
//
// `done` is called exactly once, on the loop, never from inside call(). Destroying the
// client with a call in flight destroys that call's `done` uncalled. Threading: the loop's
// thread only.

#include <expected>
#include <functional>
#include <memory>
#include <string_view>

#include "connectors/gmail/oauth.h"
#include "net/http.h"

namespace dispatchd::gmail {

using CallDone = std::move_only_function<void(std::expected<net::HttpResult, OAuthError>)>;
// Builds the request with a token (api.h's builders); called once or twice.
using MakeRequest = std::function<net::HttpRequest(std::string_view token)>;

class Client {
 public:
  // REQUIRES: `transport` and `tokens` outlive the client.
  Client(net::Transport& transport, TokenSource& tokens);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void call(MakeRequest make, CallDone done);

 private:
  struct Call;
  net::Transport& m_transport;
  TokenSource& m_tokens;
  // Shared with the calls in flight: they stop when the client is gone.
  std::shared_ptr<bool> m_alive;
};

}  // namespace dispatchd::gmail
