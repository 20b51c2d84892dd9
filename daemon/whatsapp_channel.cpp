#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "daemon/whatsapp_channel.h"

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>

#include "connectors/whatsapp/errors.h"
#include "connectors/whatsapp/graph.h"
#include "connectors/whatsapp/handshake.h"
#include "connectors/whatsapp/signature.h"
#include "connectors/whatsapp/webhook.h"
#include "connectors/whatsapp/window.h"
#include "store/inbox.h"
#include "store/outbox.h"
#include "store/round.h"
#include "store/transaction.h"

namespace dispatchd::daemon {
namespace {

namespace wa = whatsapp;
constexpr std::size_t k_max_parallel_sends = 32;
// Read receipts are a courtesy: a few at a time, so that a burst of webhooks does not open
// a connection to the Graph API per message; beyond the backlog the oldest are dropped.
constexpr std::size_t k_max_parallel_reads = 8;
constexpr std::size_t k_max_queued_reads = 10'000;
constexpr std::chrono::seconds k_auth_probe{60};
constexpr std::chrono::seconds k_store_retry{1};  // after a round that was not stored
constexpr std::chrono::milliseconds k_send_timeout{15'000};

Response text(int status, std::string body) {
  return Response{status, std::move(body) + "\n", "text/plain; charset=utf-8", {}};
}

// A Graph API call with the channel's deadline.
net::HttpRequest to_http(net::HttpRequest request) {
  request.timeout = k_send_timeout;
  return request;
}

}  // namespace

struct WhatsAppChannel::State : std::enable_shared_from_this<State> {
  boost::asio::io_context& io;
  store::Database& db;
  net::Transport& transport;
  config::WhatsApp config;
  WhatsAppSecrets secrets;
  std::size_t max_body_bytes;
  std::function<store::Time()> now;
  std::function<void()> on_inbound;
  WhatsAppCounters counters;
  std::size_t in_flight = 0;
  bool paused = false;
  bool stopping = false;
  int consecutive_retries = 0;
  boost::asio::steady_timer retry_timer;
  // Outcomes of finished Graph calls whose round was not stored (e.g. a full disk): written
  // again by the next pump, which store_timer brings. The rows stay 'sending' meanwhile.
  using Write = std::function<void(store::Database&)>;
  std::vector<Write> unrecorded;
  boost::asio::steady_timer store_timer;
  // Webhooks verified and parsed, waiting for the group commit (commit_webhooks).
  struct PendingWebhook {
    wa::Webhook webhook;
    Respond respond;
  };
  std::vector<PendingWebhook> pending;
  bool pump_posted = false;
  std::size_t starting = 0;       // begun, waiting for the commit before their requests leave
  std::deque<std::string> reads;  // message ids whose read receipt has not left yet
  std::size_t reads_in_flight = 0;

  State(boost::asio::io_context& io_, store::Database& db_, net::Transport& transport_, config::WhatsApp config_,
        WhatsAppSecrets secrets_, std::size_t max_body, std::function<store::Time()> now_,
        std::function<void()> inbound)
      : io(io_),
        db(db_),
        transport(transport_),
        config(std::move(config_)),
        secrets(std::move(secrets_)),
        max_body_bytes(max_body),
        now(std::move(now_)),
        on_inbound(std::move(inbound)),
        retry_timer(io_),
        store_timer(io_) {}

  wa::GraphAccount account() const { return {config.graph_base_url, config.phone_number_id, secrets.access_token}; }

  struct Stored {
    std::vector<std::string> new_ids;  // messages stored now (redeliveries are not)
    std::int64_t duplicates = 0;
  };
  store::Result<Stored> store_events(const wa::Webhook& webhook);
  void commit_webhooks();
  void schedule_pump();
  void pump();
  void send(store::OutboxItem item);
  void on_answer(const store::OutboxItem& item, net::HttpResult result);
  void retry_later(std::chrono::seconds delay);
  void record(Write write);
  void pump_after_store_failure();
  void mark_read(std::string message_id);
  void send_reads();
};

Response WhatsAppChannel::handle_get(const Request& request) {
  auto answer = wa::answer_handshake(request.query, m_state->secrets.verify_token);
  if (!answer) {
    spdlog::warn("whatsapp: verification handshake refused: {}", answer.error().reason);
    return text(answer.error().status, "forbidden");
  }
  return Response{200, *answer, "text/plain; charset=utf-8", {}};
}

void WhatsAppChannel::handle_post(const Request& request, Respond respond) {
  auto& s = *m_state;
  ++s.counters.webhooks;
  const auto signature = request.header("x-hub-signature-256").value_or("");
  if (auto ok = wa::verify_signature(request.body, signature, s.secrets.app_secret); !ok) {
    ++s.counters.bad_signatures;
    spdlog::warn("whatsapp: webhook refused: signature {}", wa::to_string(ok.error()));
    return respond(text(401, "bad signature"));
  }
  auto webhook = wa::parse_webhook(request.body, s.config.phone_number_id, {.max_bytes = s.max_body_bytes});
  if (!webhook) {
    ++s.counters.malformed;
    spdlog::warn("whatsapp: webhook refused: {}", webhook.error().message);
    return respond(text(webhook.error().http_status(), webhook.error().message));
  }
  for (const auto& skipped : webhook->skipped)
    spdlog::warn("whatsapp: skipped {}: {}", skipped.pointer, skipped.reason);
  s.pending.push_back({std::move(*webhook), std::move(respond)});
  // Group commit: every webhook that arrives in this round of the event loop is stored by
  // one durable commit, then all of them are answered.
  if (s.pending.size() == 1) {
    boost::asio::post(s.io, [weak = s.weak_from_this()] {
      if (auto self = weak.lock()) self->commit_webhooks();
    });
  }
}

store::Result<WhatsAppChannel::State::Stored> WhatsAppChannel::State::store_events(const wa::Webhook& webhook) {
  Stored stored;
  for (const auto& m : webhook.messages) {
    // The type as the connector normalized it ("unknown" for one it does not know): the
    // agent looks up connectors.whatsapp.message_types by it.
    auto inserted =
        store::insert_inbound(db, {"whatsapp", m.id, m.from, m.from, m.text, m.raw_json, wa::to_string(m.kind)}, now());
    if (!inserted)
      return std::unexpected(store::with_context(std::move(inserted.error()), "cannot store message " + m.id));
    if (inserted->duplicate)
      ++stored.duplicates;
    else
      stored.new_ids.push_back(m.id);
  }
  for (const auto& st : webhook.statuses) {
    std::string error;
    for (const auto& e : st.errors) error += (error.empty() ? "" : "; ") + wa::describe(e);
    auto applied = store::apply_delivery(db, {st.id, st.tracker, st.status_text, error}, now());
    if (!applied)
      return std::unexpected(
          store::with_context(std::move(applied.error()), "cannot record status " + st.status_text + " of " + st.id));
  }
  return stored;
}

void WhatsAppChannel::State::commit_webhooks() {
  auto batch = std::make_shared<std::vector<PendingWebhook>>(std::exchange(pending, {}));
  auto outcomes = std::make_shared<std::vector<std::optional<Stored>>>(batch->size());
  for (std::size_t i = 0; i < batch->size(); ++i) {
    // A savepoint per webhook: one that cannot be stored is refused alone.
    auto stored = store::transaction<Stored>(db, [&] { return store_events((*batch)[i].webhook); });
    if (stored)
      (*outcomes)[i] = std::move(*stored);
    else
      spdlog::error("whatsapp: {}", stored.error().message);
  }
  store::after_commit(db, [weak = weak_from_this(), batch, outcomes](bool committed) {
    auto self = weak.lock();
    if (!committed) {
      spdlog::error("whatsapp: the commit of {} webhook(s) failed; answered 500", batch->size());
      outcomes->assign(batch->size(), std::nullopt);
    }
    bool fresh = false;
    for (std::size_t i = 0; i < batch->size(); ++i) {
      // Not durable: 500 makes Meta deliver the event again later.
      if (!(*outcomes)[i]) {
        if (self) ++self->counters.not_stored;
        (*batch)[i].respond(text(500, "cannot store the events"));
        continue;
      }
      (*batch)[i].respond(text(200, "ok"));
      if (!self) continue;
      ++self->counters.accepted;
      self->counters.duplicates += (*outcomes)[i]->duplicates;
      self->counters.messages_stored += static_cast<std::int64_t>((*outcomes)[i]->new_ids.size());
      for (const auto& id : (*outcomes)[i]->new_ids) self->mark_read(id);
      fresh = fresh || !(*outcomes)[i]->new_ids.empty();
    }
    if (self && fresh && self->on_inbound) self->on_inbound();
  });
}

void WhatsAppChannel::State::mark_read(std::string message_id) {
  if (reads.size() >= k_max_queued_reads) {
    reads.pop_front();
    ++counters.read_receipts_dropped;
  }
  reads.push_back(std::move(message_id));
  send_reads();
}

void WhatsAppChannel::State::send_reads() {
  while (reads_in_flight < k_max_parallel_reads && !reads.empty() && !stopping) {
    auto request = wa::build_mark_read(account(), reads.front());
    reads.pop_front();
    if (!request) continue;
    ++reads_in_flight;
    // Best effort: never retried.
    transport.send(to_http(std::move(*request)), [weak = weak_from_this()](net::HttpResult) {
      if (auto self = weak.lock()) {
        --self->reads_in_flight;
        self->send_reads();
      }
    });
  }
}

void WhatsAppChannel::State::schedule_pump() {
  // Coalesced: what is decided in this round of the event loop starts with one durable
  // commit of the `sending` marks.
  if (pump_posted) return;
  pump_posted = true;
  boost::asio::post(io, [weak = weak_from_this()] {
    auto self = weak.lock();
    if (!self) return;
    self->pump_posted = false;
    self->pump();
  });
}

void WhatsAppChannel::State::pump() {
  for (auto& write : std::exchange(unrecorded, {})) record(std::move(write));
  std::vector<store::OutboxItem> batch;
  while (!stopping && !paused && in_flight + starting + batch.size() < k_max_parallel_sends) {
    auto item = store::begin_send(db, now(), "whatsapp");
    if (!item) {
      spdlog::error("whatsapp: outbox: {}", item.error().message);
      break;
    }
    if (!*item) break;
    batch.push_back(std::move(**item));
  }
  if (batch.empty()) return;
  // `sending` is on disk before any of these requests leaves: after a crash the action is
  // `unknown`, never sent twice.
  starting += batch.size();
  store::after_commit(db, [weak = weak_from_this(), batch = std::move(batch)](bool committed) mutable {
    auto self = weak.lock();
    if (!self) return;
    self->starting -= batch.size();
    if (!committed) {
      spdlog::error("whatsapp: the commit before {} send(s) failed; they stay in the outbox", batch.size());
      return self->pump_after_store_failure();
    }
    for (auto& item : batch) self->send(std::move(item));
    self->schedule_pump();
  });
}

void WhatsAppChannel::State::send(store::OutboxItem item) {
  const auto last = store::last_inbound_at(db, "whatsapp", item.recipient);
  if (last && !wa::may_send_free_form(*last, now(), std::chrono::seconds(60))) {
    // Policy, checked before sending: Meta would refuse it (131047) anyway.
    return record([id = item.id, at = now()](store::Database& d) {
      (void)store::fail_send(d, id,
                             "outside WhatsApp's 24-hour customer-service window: only a template can reach "
                             "this customer now",
                             at);
    });
  }
  auto request = wa::build_text_message(account(), item.recipient, item.body, item.idempotency_key);
  if (!request) {
    return record([id = item.id, why = "cannot build the Graph request: " + request.error(),
                   at = now()](store::Database& d) { (void)store::fail_send(d, id, why, at); });
  }
  ++in_flight;
  transport.send(to_http(std::move(*request)), [self = shared_from_this(), item](net::HttpResult result) {
    --self->in_flight;
    self->on_answer(item, std::move(result));
    self->schedule_pump();
  });
}

void WhatsAppChannel::State::on_answer(const store::OutboxItem& item, net::HttpResult result) {
  const store::Time at = now();
  if (!result) {
    const auto& e = result.error();
    if (e.kind == net::TransportErrorKind::connect_failed) {
      // Never reached Graph: safe to send again.
      record([id = item.id, why = "graph unreachable: " + e.message, at](store::Database& d) {
        (void)store::retry_send(d, id, why, at);
      });
      return retry_later(std::chrono::seconds(5));
    }
    return record([id = item.id,
                   why = std::string("no answer from graph (") + std::string(net::to_string(e.kind)) +
                         "): it may have been delivered",
                   at](store::Database& d) { (void)store::unknown_send(d, id, why, at); });
  }
  const auto retry_after = result->headers.get("Retry-After").value_or("");
  auto sent = wa::read_send_response(result->status, result->body, retry_after);
  if (sent) {
    consecutive_retries = 0;
    return record([id = item.id, wamid = sent->message_id, at](store::Database& d) {
      (void)store::complete_send(d, id, wamid, at);
    });
  }
  const auto& failure = sent.error();
  const std::string why = wa::describe(failure.error);
  switch (failure.kind) {
    case wa::ErrorClass::retry:
      record([id = item.id, why, at](store::Database& d) { (void)store::retry_send(d, id, why, at); });
      return retry_later(wa::retry_delay(failure.error, ++consecutive_retries, failure.retry_after));
    case wa::ErrorClass::auth:
      record([id = item.id, why, at](store::Database& d) { (void)store::retry_send(d, id, why, at); });
      if (!paused) spdlog::error("whatsapp: the access token was refused ({}); sending paused", why);
      paused = true;
      return retry_later(k_auth_probe);
    case wa::ErrorClass::unknown:
      return record([id = item.id, why, at](store::Database& d) { (void)store::unknown_send(d, id, why, at); });
    case wa::ErrorClass::window_closed:
    case wa::ErrorClass::permanent:
      return record([id = item.id, why, at](store::Database& d) { (void)store::fail_send(d, id, why, at); });
  }
}

void WhatsAppChannel::State::record(Write write) {
  write(db);
  store::after_commit(db, [weak = weak_from_this(), write = std::move(write)](bool durable) mutable {
    auto self = weak.lock();
    if (!self || durable) return;
    self->unrecorded.push_back(std::move(write));
    self->pump_after_store_failure();
  });
}

void WhatsAppChannel::State::pump_after_store_failure() {
  // Its own timer: Graph's backoff (retry_timer) must not be cut short by it.
  if (stopping || store_timer.expiry() > std::chrono::steady_clock::now()) return;
  store_timer.expires_after(k_store_retry);
  store_timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self) return;
    self->schedule_pump();
  });
}

void WhatsAppChannel::State::retry_later(std::chrono::seconds delay) {
  retry_timer.expires_after(delay);
  retry_timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self) return;
    self->paused = false;  // an auth pause ends with a probe: the next send tells
    self->schedule_pump();
  });
}

WhatsAppChannel::WhatsAppChannel(boost::asio::io_context& io, store::Database& db, net::Transport& transport,
                                 const config::WhatsApp& config, WhatsAppSecrets secrets, std::size_t max_body_bytes,
                                 std::function<store::Time()> now, std::function<void()> on_inbound)
    : m_state(std::make_shared<State>(io, db, transport, config, std::move(secrets), max_body_bytes, std::move(now),
                                      std::move(on_inbound))) {}

WhatsAppChannel::~WhatsAppChannel() { stop(); }

void WhatsAppChannel::pump() { m_state->schedule_pump(); }
void WhatsAppChannel::stop() {
  m_state->stopping = true;
  m_state->retry_timer.cancel();
  m_state->store_timer.cancel();
}
bool WhatsAppChannel::paused() const { return m_state->paused; }
std::size_t WhatsAppChannel::sending() const { return m_state->in_flight; }
const WhatsAppCounters& WhatsAppChannel::counters() const { return m_state->counters; }

}  // namespace dispatchd::daemon
