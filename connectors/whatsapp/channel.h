#pragma once
// WhatsApp behind the channel seam (connectors/channel.h): the pure pieces of this folder
// (signature, handshake, webhook parsing, Graph requests and errors, the 24-hour window)
// with the store, the net/ transport and the clock.
//
// Webhook (path "/webhooks/whatsapp"):
//   GET   Meta's verification handshake: the challenge (200) or 403/400.
//   POST  signature over the raw body first (401), then the bounded parse (400/413), then
//         the group commit: the webhooks handled in one round of the event loop are stored
//         by one commit (a savepoint each, so one that fails is refused alone with 500),
//         and each is answered 200 only once durable; a failed commit answers them all 500
//         (Meta delivers them again). Redelivered events are stored once (the inbox's
//         unique key). Statuses of our messages become delivery reports. Each new message
//         gets a read receipt: at most 8 in flight, never retried, and beyond a backlog
//         of 10,000 the oldest are dropped.
//   other 405 (Allow: GET, POST).
// Send: the 24-hour window first (closed: Failed window_closed, no request; reply_window()
// tells the same ahead, with the same 60 s margin), then the Graph call with
// the outbox idempotency key as the tracker (biz_opaque_callback_data), 15 s deadline.
//   Graph's answer (errors.h's classes)       outcome
//   messages[0].id                            Sent{wamid}
//   retry (rate limits, 5xx)                  RetryAfter{retry_delay(): backoff over the
//                                             consecutive retries, Retry-After honoured}
//   connection refused / unreachable          RetryAfter{5 s}: it never reached Graph
//   auth (token refused)                      RetryAfter{60 s}; health() paused for 60 s,
//                                             so the pump's next send probes the token
//   window_closed (131047)                    Failed{describe(), window_closed}
//   permanent, bad request                    Failed{describe()}
//   unknown, timeout or reset after sending   Unknown: may have been delivered
// Templates (with a waba_id and ChannelDeps::after): listed from Graph at start and every
// template_refresh (internal/template_refresh.h; a failure is logged and tried again, the
// stored set stays); the template webhooks of our account change the stored row in the
// webhook's own commit, so a paused or recategorised template shows so before the 200.
// reload() lists them again at once.
// resolve_unknown() is false: Graph cannot be asked whether a message left, so an unknown
// send is a delivery_unknown escalation (a later status webhook carrying our tracker
// still marks it sent).
// Media (with ChannelDeps::keep_media): an image, audio, video, document or sticker message
// is stored with its file (its media id, declared type and sha256, a voice note marked);
// fetch_media() downloads it (media_fetch.h).
//
// Threading: the loop's thread only (connectors/channel.h).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/thread_reads.h"
#include "connectors/channel.h"
#include "connectors/read_ahead_gate.h"
#include "connectors/whatsapp/graph.h"

namespace dispatchd::whatsapp {

inline constexpr std::string_view k_channel_name = "whatsapp";
inline constexpr std::string_view k_webhook_path = "/webhooks/whatsapp";

struct ChannelSettings {
  GraphAccount account;      // connectors.whatsapp.graph_base_url, .phone_number_id and the access token
  std::string app_secret;    // the webhooks' HMAC key
  std::string verify_token;  // the verification handshake's
  std::size_t max_body_bytes = 1024 * 1024;        // http.max_body_bytes: the webhook parser's bound
  connectors::ReadAheadGate::Settings read_ahead;  // with ChannelDeps::read_ahead: when a round is read ahead
  // connectors.whatsapp.typing_indicator: true marks a message read when the agent starts on
  // it, with the typing indicator when a reply may follow (working_on); false marks each
  // message read once stored, without the indicator.
  bool typing_indicator = true;
  // connectors.whatsapp.waba_id: the business account whose message templates are kept
  // (store/templates.h); empty: none are read and template webhooks are ignored.
  std::string waba_id;
  // connectors.whatsapp.template_refresh_minutes: how often the templates are listed again.
  std::chrono::milliseconds template_refresh{std::chrono::minutes(60)};
  // connectors.whatsapp.prices: what a status's pricing object costs (pricing.h).
  store::PriceTable prices;
  // The loop thread's reads from storage so far (common/thread_reads.h); tests pass their own.
  std::int64_t (*blocks_read)() = common::blocks_read_by_this_thread;
};

class WhatsAppChannel final : public connectors::Channel, public connectors::WebhookEndpoint {
 public:
  WhatsAppChannel(connectors::ChannelDeps deps, ChannelSettings settings);
  ~WhatsAppChannel() override;
  WhatsAppChannel(const WhatsAppChannel&) = delete;
  WhatsAppChannel& operator=(const WhatsAppChannel&) = delete;

  std::string_view name() const override { return k_channel_name; }
  void send(const store::OutboxItem& item, connectors::SendDone done) override;
  bool resolve_unknown(const store::OutboxItem& item, connectors::SendDone& done) override;
  connectors::Health health() const override;
  void working_on(std::string_view provider_message_id, bool answering) override;
  std::optional<ReplyWindow> reply_window(const std::string& counterpart, store::Time now) override;
  bool fetch_media(const connectors::MediaFetch& fetch, connectors::MediaChunk& chunk,
                   connectors::MediaFetchDone& done) override;
  connectors::WebhookEndpoint* webhook() override { return this; }
  void stop() override;
  void reload() override;

  std::string_view path() const override { return k_webhook_path; }
  void handle(const connectors::WebhookRequest& request, connectors::WebhookReply reply) override;
  const connectors::WebhookCounters& counters() const override;

  struct State;  // opaque; public only for the .cpp's callbacks

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::whatsapp
