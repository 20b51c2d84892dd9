#include "connectors/gmail/client.h"

#include <string>
#include <utility>

#include "common/handler_timing.h"

namespace dispatchd::gmail {

struct Client::Call : std::enable_shared_from_this<Call> {
  Call(Client& c, MakeRequest m, CallDone d) : client(c), alive(c.m_alive), make(std::move(m)), done(std::move(d)) {}

  Client& client;
  std::weak_ptr<bool> alive;
  MakeRequest make;
  CallDone done;
  bool retried = false;

  void start() {
    client.m_tokens.get([self = shared_from_this()](std::expected<std::string, OAuthError> token) {
      if (self->alive.expired()) return;
      if (!token) return self->done(std::unexpected(std::move(token.error())));
      self->send(std::move(*token));
    });
  }

  void send(std::string token) {
    auto request = make(token);
    client.m_transport.send(std::move(request),
                            common::named_step([self = shared_from_this(), token](net::HttpResult result) {
                              if (self->alive.expired()) return;
                              if (result && result->status == 401 && !self->retried) {
                                // Refused token: one more try with a fresh one. Only this token is forgotten, so a
                                // 401 racing another caller's refresh does not throw the new token away.
                                self->retried = true;
                                self->client.m_tokens.invalidate(token);
                                return self->start();
                              }
                              self->done(std::move(result));
                            }));
  }
};

Client::Client(net::Transport& transport, TokenSource& tokens)
    : m_transport(transport), m_tokens(tokens), m_alive(std::make_shared<bool>(true)) {}

Client::~Client() = default;

void Client::call(MakeRequest make, CallDone done) {
  std::make_shared<Call>(*this, std::move(make), std::move(done))->start();
}

}  // namespace dispatchd::gmail
