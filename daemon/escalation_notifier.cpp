#include "daemon/escalation_notifier.h"

#include <spdlog/spdlog.h>

#include "common/handler_timing.h"
#include "daemon/escalation_notifier_decisions.h"
#include "store/round.h"

namespace dispatchd::daemon {
namespace {

// Scheme and authority only: a Slack or Mattermost hook's path is its secret.
std::string origin(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return "the notify_url";
  return url.substr(0, url.find('/', scheme + 3));
}

}  // namespace

EscalationNotifier::EscalationNotifier(EscalationNotifierDeps deps, EscalationNotifierSettings settings)
    : m_deps(std::move(deps)), m_settings(std::move(settings)) {}

EscalationNotifier::~EscalationNotifier() = default;

store::Result<void> EscalationNotifier::start() {
  auto cursor = store::init_notify_cursor(m_deps.db, m_deps.now());
  if (!cursor) return std::unexpected(cursor.error());
  m_cursor = cursor->last_audit_id;
  spdlog::info("notifications: new escalations are POSTed to {} (after audit event {})", origin(m_settings.url),
               *m_cursor);
  return {};
}

void EscalationNotifier::poke() {
  if (m_stopped || !m_cursor || m_state != State::idle) return;
  auto next = store::pending_escalations(m_deps.db, *m_cursor, 1);
  if (!next) {
    if (!m_read_failing) spdlog::error("notifications: cannot read new escalations: {}", next.error().message);
    m_read_failing = true;
    return;
  }
  m_read_failing = false;
  if (next->empty()) return;
  m_state = State::committing;
  // The row may belong to the round still open: it is sent once that round is on disk, and
  // read again (or not at all) when the round is lost.
  store::after_commit(
      m_deps.db, [this, alive = std::weak_ptr<char>(m_alive), escalation = std::move(next->front())](bool durable) {
        if (alive.expired() || m_stopped) return;
        if (!durable) {
          m_state = State::idle;
          return;
        }
        send(escalation);
      });
}

void EscalationNotifier::send(const store::PendingEscalation& escalation) {
  net::HttpRequest request;
  request.method = "POST";
  request.url = m_settings.url;
  request.headers.add("Content-Type", "application/json");
  request.body = notification_body(escalation, m_settings.public_url);
  request.connect_timeout = m_settings.timeout;
  request.timeout = m_settings.timeout;
  m_state = State::posting;
  m_deps.transport.send(std::move(request), common::named_step([this, alive = std::weak_ptr<char>(m_alive),
                                                                escalation](net::HttpResult result) {
                          if (alive.expired() || m_stopped) return;
                          on_answer(escalation, result);
                        }));
}

void EscalationNotifier::on_answer(const store::PendingEscalation& escalation, const net::HttpResult& result) {
  const DeliveryVerdict verdict = classify_delivery(result);
  switch (verdict.delivery) {
    case Delivery::delivered:
      ++m_stats.sent;
      spdlog::info("notifications: escalation {} notified ({})", escalation.escalation_id, verdict.why);
      break;
    case Delivery::permanent:
      ++m_stats.failed;
      spdlog::error("notifications: {} refused the notification of escalation {} with {}; not sent again",
                    origin(m_settings.url), escalation.escalation_id, verdict.why);
      break;
    case Delivery::retry: {
      ++m_stats.retried;
      const auto delay = notify_retry_delay(++m_failures, verdict.retry_after);
      spdlog::warn("notifications: escalation {} not notified ({}); trying again in {} ms", escalation.escalation_id,
                   verdict.why, delay.count());
      m_state = State::waiting;
      m_deps.after(delay, [this, alive = std::weak_ptr<char>(m_alive)] {
        if (alive.expired() || m_stopped) return;
        m_state = State::idle;
        poke();
      });
      return;
    }
  }
  m_failures = 0;
  move_past(escalation.audit_id);
  m_state = State::idle;
  poke();
}

void EscalationNotifier::move_past(std::int64_t audit_id) {
  m_cursor = std::max(*m_cursor, audit_id);
  // A failed write is not retried by itself: the next one writes the cursor past both (it
  // never moves back), and a restart before that sends this notification again.
  if (auto moved = store::advance_notify_cursor(m_deps.db, audit_id, m_deps.now()); !moved)
    spdlog::error("notifications: cannot store that audit event {} was notified ({}); a restart now sends it again",
                  audit_id, moved.error().message);
}

void EscalationNotifier::stop() { m_stopped = true; }

store::Result<std::int64_t> EscalationNotifier::pending() {
  if (!m_cursor) return 0;
  return store::count_pending_escalations(m_deps.db, *m_cursor);
}

}  // namespace dispatchd::daemon
