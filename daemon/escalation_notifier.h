#pragma once
// Telling staff: one POST to escalation.notify_url per new escalation (the body and the
// meaning of each answer are in daemon/escalation_notifier_decisions.h), read from the audit trail
// after a cursor (store/escalation_feed.h).
//
// One POST in flight at a time, in audit order. A 2xx moves the cursor past it; a retryable
// failure (408, 429, 5xx, no answer) sends the same one again after a backoff (1 s doubling
// to 5 min, at least the Retry-After) and everything after it waits; any other status is
// logged as an error naming it, counted failed, and the cursor moves on (a receiver that
// refuses a body will refuse it again; the escalation itself is in the queue all the same).
//
// Delivery is at least once: the cursor is written after the answer, in the daemon's next
// group commit, so a crash (or a stop) between the POST and that commit sends the
// notification again at the next start; nothing is lost. An escalation is POSTed only once
// its own commit is durable (store::after_commit), never one a failed round took back.
//
// Never blocks the pipeline: it reads one row at a time on the loop, and the POST runs on
// the transport. Threading: the event loop's thread only, like the store. Callbacks that
// arrive after stop() or destruction do nothing.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "connectors/channel.h"
#include "net/http.h"
#include "store/database.h"
#include "store/error.h"
#include "store/escalation_feed.h"
#include "store/inbox.h"

namespace dispatchd::daemon {

struct EscalationNotifierSettings {
  std::string url;         // escalation.notify_url
  std::string public_url;  // staff.public_url: the base of the links to the case
  std::chrono::milliseconds timeout{5000};
};

struct EscalationNotifierDeps {
  store::Database& db;
  net::Transport& transport;
  std::function<store::Time()> now;
  connectors::After after;  // the backoff's timer
};

// Since this process started (Prometheus takes a restart's reset of a counter in its stride).
struct EscalationNotifierStats {
  std::int64_t sent = 0;     // 2xx
  std::int64_t retried = 0;  // retryable failures (each is tried again)
  std::int64_t failed = 0;   // refused for good: the cursor moved past them
};

class EscalationNotifier {
 public:
  EscalationNotifier(EscalationNotifierDeps deps, EscalationNotifierSettings settings);
  ~EscalationNotifier();
  EscalationNotifier(const EscalationNotifier&) = delete;
  EscalationNotifier& operator=(const EscalationNotifier&) = delete;

  // Reads the cursor, creating it at the newest audit event on the first start (see
  // store/escalation_feed.h). REQUIRES: before the first poke(); an error leaves it unstarted.
  [[nodiscard]] store::Result<void> start();

  // Sends the next pending escalation when nothing is in flight or waiting out a backoff;
  // after a 2xx or a permanent refusal it goes on to the next by itself. Cheap when idle
  // (one indexed read): the daemon calls it every second and after each agent decision.
  void poke();

  // Sends nothing more; a POST in flight is abandoned (its answer ignored, the cursor not
  // moved: it is sent again at the next start).
  void stop();

  EscalationNotifierStats stats() const { return m_stats; }

  // Escalations not yet notified (for the dispatchd_notifications_pending gauge).
  [[nodiscard]] store::Result<std::int64_t> pending();

 private:
  enum class State {
    idle,
    committing,  // waiting for the escalation's round to be durable
    posting,
    waiting,  // a backoff
  };

  void send(const store::PendingEscalation& escalation);
  void on_answer(const store::PendingEscalation& escalation, const net::HttpResult& result);
  void move_past(std::int64_t audit_id);

  EscalationNotifierDeps m_deps;
  EscalationNotifierSettings m_settings;
  std::optional<std::int64_t> m_cursor;  // set by start(); ahead of the stored one while its write is not committed
  State m_state = State::idle;
  bool m_stopped = false;
  int m_failures = 0;           // retryable failures in a row
  bool m_read_failing = false;  // the feed could not be read: logged once per streak
  EscalationNotifierStats m_stats;
  std::shared_ptr<char> m_alive = std::make_shared<char>();  // callbacks hold a weak_ptr to it
};

}  // namespace dispatchd::daemon
