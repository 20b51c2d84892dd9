#include "connectors/whatsapp/channel.h"

#include <algorithm>

#include <spdlog/spdlog.h>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "common/handler_timing.h"
#include "common/json_out.h"
#include "connectors/whatsapp/errors.h"
#include "connectors/whatsapp/handshake.h"
#include "connectors/whatsapp/internal/template_refresh.h"
#include "connectors/whatsapp/media_fetch.h"
#include "connectors/whatsapp/pricing.h"
#include "connectors/whatsapp/signature.h"
#include "connectors/whatsapp/template_message.h"
#include "connectors/whatsapp/webhook.h"
#include "connectors/whatsapp/window.h"
#include "media/digest.h"
#include "net/retry_after.h"
#include "store/round.h"
#include "store/templates.h"

namespace dispatchd::whatsapp {
namespace {

using connectors::SendOutcome;
using connectors::WebhookResponse;

// Read receipts are a courtesy: a few at a time, so that a burst of webhooks does not open
// a connection to the Graph API per message; beyond the backlog the oldest are dropped.
constexpr std::size_t k_max_parallel_reads = 8;
constexpr std::size_t k_max_queued_reads = 10'000;
constexpr std::chrono::seconds k_auth_probe{60};
constexpr std::chrono::seconds k_unreachable_retry{5};
constexpr std::chrono::milliseconds k_send_timeout{15'000};

WebhookResponse text(int status, std::string body) { return WebhookResponse{status, std::move(body) + "\n", {}}; }

// The file of a media message as the store keeps it; nullopt for any other kind.
std::optional<store::MediaKind> media_kind(MessageKind kind) {
  switch (kind) {
    case MessageKind::image: return store::MediaKind::image;
    case MessageKind::audio: return store::MediaKind::audio;
    case MessageKind::video: return store::MediaKind::video;
    case MessageKind::document: return store::MediaKind::document;
    case MessageKind::sticker: return store::MediaKind::sticker;
    default: return std::nullopt;
  }
}

// The webhook's events as the store takes them, moved out of the parse; statuses priced at
// `prices`; with `keep_media`, each media message with its file.
connectors::InboundEvents events_of(Webhook webhook, const store::PriceTable& prices, bool keep_media) {
  connectors::InboundEvents events;
  events.messages.reserve(webhook.messages.size());
  for (auto& m : webhook.messages) {
    // The type as the connector normalized it ("unknown" for one it does not know): the
    // agent looks up connectors.whatsapp.message_types by it. The sender is the
    // conversation.
    events.messages.push_back({std::string(k_channel_name), std::move(m.id), m.from, std::move(m.from),
                               std::move(m.text), std::move(m.raw_json), to_string(m.kind)});
    const auto kind = media_kind(m.kind);
    if (keep_media && kind && m.media && !m.media->id.empty()) {
      // The webhook's sha256 is hex or base64; what is neither declares nothing to check.
      events.messages.back().media.push_back({*kind, std::move(m.media->id), std::move(m.media->mime_type),
                                              media::sha256_hex(m.media->sha256).value_or(""),
                                              std::move(m.media->filename), m.media->voice});
    }
  }
  events.reports.reserve(webhook.statuses.size());
  for (auto& st : webhook.statuses) {
    std::string error;
    for (const auto& e : st.errors) error += (error.empty() ? "" : "; ") + describe(e);
    auto pricing = send_pricing_of(st, prices);
    std::string category = st.pricing ? std::move(st.pricing->category) : std::string();
    events.reports.push_back({std::move(st.id), std::move(st.tracker), st.status, std::move(error), std::move(pricing),
                              std::move(category),
                              st.status == DeliveryStatus::other ? std::move(st.status_text) : std::string()});
  }
  return events;
}

}  // namespace

struct WhatsAppChannel::State : std::enable_shared_from_this<State> {
  connectors::ChannelDeps deps;
  ChannelSettings settings;
  connectors::WebhookCounters counters;
  bool stopping = false;
  int consecutive_retries = 0;
  std::optional<store::Time> paused_until;  // the access token was refused: sending paused until then
  // Webhooks verified and parsed, waiting for the group commit (commit_webhooks).
  struct PendingWebhook {
    connectors::InboundEvents events;
    connectors::WebhookReply reply;
    std::vector<TemplateEvent> templates;  // of our business account
  };
  std::vector<PendingWebhook> pending;
  // While storing reads from the disk (connectors/read_ahead_gate.h) a round is read ahead
  // off the loop first: `reading` is the round being read, `waiting` what came meanwhile.
  // Both go to `pending` in the order they came, so a customer's messages are stored in order.
  std::vector<PendingWebhook> waiting;
  std::vector<PendingWebhook> reading;
  bool reading_ahead = false;
  connectors::ReadAheadGate gate;
  // Read marks that have not left yet: the message id, and whether it shows typing.
  std::deque<std::pair<std::string, Typing>> reads;
  std::size_t reads_in_flight = 0;
  std::unique_ptr<detail::TemplateRefresher> templates;  // with a waba_id

  State(connectors::ChannelDeps d, ChannelSettings s)
      : deps(std::move(d)), settings(std::move(s)), gate(settings.read_ahead) {}

  bool paused() const { return paused_until && deps.now() < *paused_until; }
  WebhookResponse handshake(const connectors::WebhookRequest& request) const;
  void receive(const connectors::WebhookRequest& request, connectors::WebhookReply reply);
  void to_store(PendingWebhook webhook);
  void read_next();
  void read_done(std::int64_t blocks);
  void commit_webhooks();
  std::vector<TemplateEvent> ours(std::vector<TemplateEvent> events) const;
  store::Result<void> apply(const std::vector<TemplateEvent>& events, store::Time now);
  void mark_read(std::string message_id, Typing typing);
  void send_reads();
  void send(const store::OutboxItem& item, connectors::SendDone done);
  SendOutcome outcome_of(net::HttpResult result);
  // The Graph request for a row: a text, or its choices as an interactive message.
  std::expected<net::HttpRequest, std::string> request_for(const store::OutboxItem& item) const;
  std::expected<net::HttpRequest, std::string> template_request(const store::OutboxItem& item) const;
  std::optional<std::string> window_refusal(const std::string& recipient) const;
  SendOutcome refused_token(std::string why);
};

WebhookResponse WhatsAppChannel::State::handshake(const connectors::WebhookRequest& request) const {
  auto answer = answer_handshake(request.query, settings.verify_token);
  if (!answer) {
    spdlog::warn("whatsapp: verification handshake refused: {}", answer.error().reason);
    return text(answer.error().status, "forbidden");
  }
  return WebhookResponse{200, std::move(*answer), {}};
}

void WhatsAppChannel::State::receive(const connectors::WebhookRequest& request, connectors::WebhookReply reply) {
  ++counters.webhooks;
  const auto signature = request.header("x-hub-signature-256").value_or("");
  if (auto ok = verify_signature(request.body, signature, settings.app_secret); !ok) {
    ++counters.bad_signatures;
    spdlog::warn("whatsapp: webhook refused: signature {}", to_string(ok.error()));
    return reply(text(401, "bad signature"));
  }
  auto webhook = parse_webhook(request.body, settings.account.phone_number_id, {.max_bytes = settings.max_body_bytes});
  if (!webhook) {
    ++counters.malformed;
    spdlog::warn("whatsapp: webhook refused: {}", webhook.error().message);
    return reply(text(webhook.error().http_status(), webhook.error().message));
  }
  for (const auto& skipped : webhook->skipped)
    spdlog::warn("whatsapp: skipped {}: {}", skipped.pointer, skipped.reason);
  auto ours_only = ours(std::move(webhook->templates));
  PendingWebhook parsed{events_of(std::move(*webhook), settings.prices, deps.keep_media), std::move(reply),
                        std::move(ours_only)};
  if (deps.read_ahead && (reading_ahead || gate.wanted(connectors::ReadAheadGate::Clock::now()))) {
    waiting.push_back(std::move(parsed));
    if (!reading_ahead) read_next();
    return;
  }
  to_store(std::move(parsed));
}

void WhatsAppChannel::State::to_store(PendingWebhook webhook) {
  pending.push_back(std::move(webhook));
  // Group commit: every webhook that arrives in this round of the event loop is stored by
  // one durable commit, then all of them are answered.
  if (pending.size() == 1) {
    deps.post(common::named_step([weak = weak_from_this()] {
      if (auto self = weak.lock()) self->commit_webhooks();
    }));
  }
}

void WhatsAppChannel::State::read_next() {
  reading = std::exchange(waiting, {});
  reading_ahead = true;
  ++counters.rounds_read_ahead;
  connectors::InboundEvents keys;
  for (const auto& webhook : reading) {
    for (const auto& m : webhook.events.messages)
      keys.messages.push_back({m.channel, m.provider_message_id, m.conversation_id, m.sender, {}, {}, {}});
    keys.reports.insert(keys.reports.end(), webhook.events.reports.begin(), webhook.events.reports.end());
  }
  deps.read_ahead(std::move(keys), [weak = weak_from_this()](std::int64_t blocks) {
    if (auto self = weak.lock()) self->read_done(blocks);
  });
}

void WhatsAppChannel::State::read_done(std::int64_t blocks) {
  const auto now = connectors::ReadAheadGate::Clock::now();
  gate.observe(blocks, now);
  for (auto& webhook : reading) to_store(std::move(webhook));
  reading.clear();
  reading_ahead = false;
  if (waiting.empty()) return;
  if (gate.wanted(now)) return read_next();
  for (auto& webhook : std::exchange(waiting, {})) to_store(std::move(webhook));
}

void WhatsAppChannel::State::commit_webhooks() {
  auto batch = std::make_shared<std::vector<PendingWebhook>>(std::exchange(pending, {}));
  auto outcomes = std::make_shared<std::vector<std::optional<connectors::StoredEvents>>>(batch->size());
  const store::Instant at = deps.now();
  const std::int64_t blocks_before = settings.blocks_read();
  for (std::size_t i = 0; i < batch->size(); ++i) {
    // A savepoint per webhook: one that cannot be stored is refused alone.
    auto stored = connectors::store_inbound(deps.db, (*batch)[i].events, at);
    if (stored) {
      if (auto applied = apply((*batch)[i].templates, store::whole_seconds(at)); applied)
        (*outcomes)[i] = std::move(*stored);
      else
        spdlog::error("whatsapp: templates: {}", applied.error().message);
    } else {
      spdlog::error("whatsapp: {}", stored.error().message);
    }
  }
  if (deps.read_ahead) gate.observe(settings.blocks_read() - blocks_before, connectors::ReadAheadGate::Clock::now());
  // The agent may take the new messages in this very round, before its COMMIT: what it
  // writes commits with them or after them, so it cannot be on disk without them, and the
  // model hears of a message without waiting for the round to end. Should the COMMIT fail,
  // the agent abandons what it took in the round (agent.cpp, Agent::State::take).
  const bool fresh = std::ranges::any_of(*outcomes, [](const auto& o) { return o && !o->new_ids.empty(); });
  if (fresh && deps.on_inbound) deps.on_inbound();
  store::after_commit(deps.db, [weak = weak_from_this(), batch, outcomes](bool committed) {
    auto self = weak.lock();
    if (!committed) {
      spdlog::error("whatsapp: the commit of {} webhook(s) failed; answered 500", batch->size());
      outcomes->assign(batch->size(), std::nullopt);
    }
    for (std::size_t i = 0; i < batch->size(); ++i) {
      auto& stored = (*outcomes)[i];
      // Not durable: 500 makes Meta deliver the event again later.
      if (!stored) {
        if (self) ++self->counters.not_stored;
        (*batch)[i].reply(text(500, "cannot store the events"));
        continue;
      }
      (*batch)[i].reply(text(200, "ok"));
      if (!self) continue;
      ++self->counters.accepted;
      self->counters.duplicates += stored->duplicates;
      self->counters.messages_stored += static_cast<std::int64_t>(stored->new_ids.size());
      // With the typing indicator, the read mark waits for the agent (working_on).
      if (!self->settings.typing_indicator) {
        for (auto& id : stored->new_ids) self->mark_read(std::move(id), Typing::hidden);
      }
    }
  });
}

std::vector<TemplateEvent> WhatsAppChannel::State::ours(std::vector<TemplateEvent> events) const {
  std::vector<TemplateEvent> out;
  for (auto& e : events) {
    if (!settings.waba_id.empty() && e.waba_id == settings.waba_id)
      out.push_back(std::move(e));
    else
      spdlog::info("whatsapp: template webhook for {} {} of account {} ignored (not connectors.whatsapp.waba_id)",
                   e.name, e.language, e.waba_id);
  }
  return out;
}

// In the webhook's commit: when it cannot be stored, Meta gets 500 and delivers it again.
store::Result<void> WhatsAppChannel::State::apply(const std::vector<TemplateEvent>& events, store::Time now) {
  for (const auto& e : events) {
    const std::string which = e.name + " " + e.language;
    if (e.kind == TemplateEvent::Kind::category && e.category && !e.impending) {
      auto changed = store::set_template_category(deps.db, e.name, e.language, *e.category, now);
      if (!changed) return std::unexpected(changed.error());
      spdlog::info("whatsapp: template {} is now {}{}", which, store::to_sql(*e.category),
                   *changed ? "" : " (no change, or not a stored template)");
    } else if (e.kind == TemplateEvent::Kind::status && e.status) {
      JsonOut graph;
      graph.begin_object().field("event", e.event);
      if (!e.reason.empty()) graph.field("reason", e.reason);
      auto changed = store::set_template_status(deps.db, e.name, e.language, *e.status, graph.end_object().str(), now);
      if (!changed) return std::unexpected(changed.error());
      spdlog::info("whatsapp: template {}: {} ({}){}", which, e.event, store::to_sql(*e.status),
                   *changed ? "" : " (no change, or not a stored template)");
    } else {
      spdlog::info("whatsapp: template {}: {} noted, nothing to change", which,
                   e.impending ? "an announced recategorisation" : e.event);
    }
  }
  return {};
}

void WhatsAppChannel::State::mark_read(std::string message_id, Typing typing) {
  if (reads.size() >= k_max_queued_reads) {
    reads.pop_front();
    ++counters.read_receipts_dropped;
  }
  reads.emplace_back(std::move(message_id), typing);
  send_reads();
}

void WhatsAppChannel::State::send_reads() {
  while (reads_in_flight < k_max_parallel_reads && !reads.empty() && !stopping) {
    auto request = build_mark_read(settings.account, reads.front().first, reads.front().second);
    reads.pop_front();
    if (!request) continue;
    request->timeout = k_send_timeout;
    ++reads_in_flight;
    // Best effort: never retried.
    deps.transport.send(std::move(*request), common::named_step([weak = weak_from_this()](net::HttpResult) {
                          if (auto self = weak.lock()) {
                            --self->reads_in_flight;
                            self->send_reads();
                          }
                        }));
  }
}

void WhatsAppChannel::State::send(const store::OutboxItem& item, connectors::SendDone done) {
  const auto refuse = [this, &done](std::string why, store::SendFailure because = store::SendFailure::refused) {
    deps.post(common::named_step([done = std::move(done), why = std::move(why), because]() mutable {
      done(connectors::Failed{std::move(why), because});
    }));
  };
  // A template reaches the customer whatever the window: it is checked against the stored
  // template instead (approved now, and its parameters those the template takes).
  const bool free_form = item.template_message.empty();
  if (free_form) {
    if (auto closed = window_refusal(item.recipient))
      return refuse(std::move(*closed), store::SendFailure::window_closed);
  }
  auto request = free_form ? request_for(item) : template_request(item);
  if (!request) return refuse(free_form ? "cannot build the Graph request: " + request.error() : request.error());
  request->timeout = k_send_timeout;
  // Weak: a channel destroyed with the send in flight drops `done` uncalled when the answer
  // comes (connectors/channel.h); whoever gave it may be gone too.
  deps.transport.send(std::move(*request), common::named_step([weak = weak_from_this(),
                                                               done = std::move(done)](net::HttpResult result) mutable {
                        if (auto self = weak.lock()) done(self->outcome_of(std::move(result)));
                      }));
}

// Policy, checked before a free-form send: Meta would refuse it (131047) anyway.
std::optional<std::string> WhatsAppChannel::State::window_refusal(const std::string& recipient) const {
  const store::Time now = store::whole_seconds(deps.now());
  const auto last = store::last_inbound_at(deps.db, std::string(k_channel_name), recipient);
  if (!last) {
    spdlog::warn("whatsapp: cannot read when {} last wrote ({}); sending without the window check", recipient,
                 last.error().message);
    return std::nullopt;
  }
  if (send_window(*last, now).open) return std::nullopt;
  return "outside WhatsApp's 24-hour customer-service window: only a template can reach this customer now";
}

std::expected<net::HttpRequest, std::string> WhatsAppChannel::State::template_request(
    const store::OutboxItem& item) const {
  auto send = template_send::parse_stored(item.template_message);
  if (!send) return std::unexpected(send.error());
  auto stored = store::find_template(deps.db, send->name, send->language);
  if (!stored) return std::unexpected("cannot read the template " + send->name + ": " + stored.error().message);
  if (!*stored)
    return std::unexpected("the template " + send->name + " (" + send->language +
                           ") is not among the account's templates");
  if (auto refused = template_refusal(**stored)) return std::unexpected(std::move(*refused));
  auto object = template_object(*send, **stored);
  if (!object) return std::unexpected(object.error());
  return build_template_message(settings.account, item.recipient, *object, item.idempotency_key);
}

std::expected<net::HttpRequest, std::string> WhatsAppChannel::State::request_for(const store::OutboxItem& item) const {
  if (item.interactive.empty())
    return build_text_message(settings.account, item.recipient, item.body, item.idempotency_key);
  auto choices = interactive::parse_stored(item.interactive);
  if (!choices) return std::unexpected(choices.error());
  return build_interactive_message(settings.account, item.recipient, item.body, *choices, item.idempotency_key);
}

SendOutcome WhatsAppChannel::State::outcome_of(net::HttpResult result) {
  if (!result) {
    const auto& e = result.error();
    // Never reached Graph: safe to send again.
    if (e.kind == net::TransportErrorKind::connect_failed)
      return connectors::RetryAfter{k_unreachable_retry, "graph unreachable: " + e.message};
    return connectors::Unknown{"no answer from graph (" + std::string(net::to_string(e.kind)) +
                               "): it may have been delivered"};
  }
  auto sent = read_send_response(result->status, result->body,
                                 net::retry_after_seconds(result->headers, std::chrono::system_clock::now()));
  if (sent) {
    consecutive_retries = 0;
    paused_until.reset();
    return connectors::Sent{std::move(sent->message_id)};
  }
  const auto& failure = sent.error();
  std::string why = describe(failure.error);
  switch (failure.kind) {
    case ErrorClass::retry:
      return connectors::RetryAfter{retry_delay(failure.error, ++consecutive_retries, failure.retry_after),
                                    std::move(why)};
    case ErrorClass::auth: return refused_token(std::move(why));
    case ErrorClass::unknown: return connectors::Unknown{std::move(why)};
    case ErrorClass::window_closed: return connectors::Failed{std::move(why), store::SendFailure::window_closed};
    case ErrorClass::permanent: return connectors::Failed{std::move(why)};
  }
  return connectors::Failed{std::move(why)};
}

SendOutcome WhatsAppChannel::State::refused_token(std::string why) {
  if (!paused()) spdlog::error("whatsapp: the access token was refused ({}); sending paused", why);
  // The pause ends with a probe: the pump's first send after it tells.
  paused_until = store::whole_seconds(deps.now()) + k_auth_probe;
  return connectors::RetryAfter{k_auth_probe, std::move(why)};
}

WhatsAppChannel::WhatsAppChannel(connectors::ChannelDeps deps, ChannelSettings settings)
    : m_state(std::make_shared<State>(std::move(deps), std::move(settings))) {
  const auto& s = m_state->settings;
  if (s.waba_id.empty() || !m_state->deps.after) return;
  m_state->templates = std::make_unique<detail::TemplateRefresher>(
      m_state->deps, detail::TemplateRefreshSettings{s.account, s.waba_id, s.template_refresh});
  m_state->templates->refresh_after(std::chrono::milliseconds(0));
}

WhatsAppChannel::~WhatsAppChannel() { stop(); }

void WhatsAppChannel::reload() {
  if (m_state->templates) m_state->templates->refresh_after(std::chrono::milliseconds(0));
}

void WhatsAppChannel::send(const store::OutboxItem& item, connectors::SendDone done) {
  m_state->send(item, std::move(done));
}

bool WhatsAppChannel::resolve_unknown(const store::OutboxItem&, connectors::SendDone&) {
  // The Cloud API has no lookup by our key: staff decide (delivery_unknown).
  return false;
}

bool WhatsAppChannel::fetch_media(const connectors::MediaFetch& fetch, connectors::MediaChunk& chunk,
                                  connectors::MediaFetchDone& done) {
  whatsapp::fetch_media(m_state->deps.transport, m_state->deps.post, m_state->settings.account, fetch, std::move(chunk),
                        std::move(done), m_state);
  return true;
}

std::optional<ReplyWindow> WhatsAppChannel::reply_window(const std::string& counterpart, store::Time now) {
  auto last = store::last_inbound_at(m_state->deps.db, std::string(k_channel_name), counterpart);
  if (!last) {
    spdlog::warn("whatsapp: cannot read when {} last wrote ({})", counterpart, last.error().message);
    return std::nullopt;
  }
  return send_window(*last, now);
}

void WhatsAppChannel::working_on(std::string_view provider_message_id, bool answering) {
  if (!m_state->settings.typing_indicator || provider_message_id.empty()) return;
  m_state->mark_read(std::string(provider_message_id), answering ? Typing::shown : Typing::hidden);
}

connectors::Health WhatsAppChannel::health() const {
  if (!m_state->paused()) return {};
  return {true, "the access token was refused"};
}

void WhatsAppChannel::stop() {
  m_state->stopping = true;
  if (m_state->templates) m_state->templates->stop();
}

void WhatsAppChannel::handle(const connectors::WebhookRequest& request, connectors::WebhookReply reply) {
  if (request.method == "POST") return m_state->receive(request, std::move(reply));
  if (request.method == "GET") return reply(m_state->handshake(request));
  reply(WebhookResponse{405, "use GET or POST\n", {{"Allow", "GET, POST"}}});
}

const connectors::WebhookCounters& WhatsAppChannel::counters() const { return m_state->counters; }

}  // namespace dispatchd::whatsapp
