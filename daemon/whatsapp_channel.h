#pragma once
// The WhatsApp channel of the running daemon: the webhook endpoints and the sender that
// drains the outbox through the Graph API. The formats are connectors/whatsapp/ (pure);
// this file adds the store, the transport and the clock.
//
// Webhook POST: signature over the raw body first (401), then the bounded parse (400/413),
// then the group commit (store/round.h): the webhooks of one round of the event loop are
// stored in one durable commit (a savepoint each, so one that fails is refused alone with
// 500), and each is answered 200 only after it. Redelivered events are stored once (the inbox's unique key).
// Sender: takes approved actions (committed 'sending' before the call, a batch per durable
// commit), checks the 24-hour window before a free-form text, sends with our idempotency
// key as the tracker, and maps the answer: sent; retry later (rate limits, 5xx, connection refused); failed for good
// (window closed, permanent errors: an escalation); unknown (timeouts after the request
// left, unreadable 2xx: an escalation, never resent); auth (token refused: sending pauses,
// /readyz says so, and a probe retries later).
// A round whose COMMIT fails (a full disk): its webhooks are answered 500 (Meta delivers
// them again), its 'sending' marks and send results are written again a second later; a
// request never leaves twice.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "config/config.h"
#include "daemon/http_server.h"
#include "daemon/metrics.h"
#include "net/http.h"
#include "store/database.h"
#include "store/inbox.h"

namespace boost::asio {
class io_context;
}

namespace dispatchd::daemon {

struct WhatsAppSecrets {
  std::string access_token;
  std::string app_secret;
  std::string verify_token;
};

class WhatsAppChannel {
 public:
  // `on_inbound` runs after new messages are committed (the agent's poke).
  WhatsAppChannel(boost::asio::io_context& io, store::Database& db, net::Transport& transport,
                  const config::WhatsApp& config, WhatsAppSecrets secrets, std::size_t max_body_bytes,
                  std::function<store::Time()> now, std::function<void()> on_inbound);
  ~WhatsAppChannel();

  Response handle_get(const Request& request);
  // Answers through `respond` after the group commit (or at once when refused).
  void handle_post(const Request& request, Respond respond);

  // Sends what the outbox holds for WhatsApp, up to a few sends at once, from a handler
  // posted to the event loop (calls in one round coalesce). Call it after decisions and on
  // a timer.
  void pump();
  // Finishes nothing new; in-flight sends still complete.
  void stop();

  bool paused() const;          // the access token was refused
  std::size_t sending() const;  // sends in flight
  const WhatsAppCounters& counters() const;

  struct State;  // opaque; public only for the .cpp's callbacks

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::daemon
