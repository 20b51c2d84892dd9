#pragma once
// The outbox pump: sends the approved outbox rows of every channel through its
// connectors::Channel and writes each outcome, the same way for every channel.
//
// Per channel ("lane"), from a handler posted to the loop (pump() calls in one round
// coalesce) or in the caller's step (pump_now()):
//   1. take approved rows with store::begin_send(channel name) while fewer than
//      max_in_flight sends of the channel are in flight or starting, and not while the
//      channel is held back (below);
//   2. once their 'sending' marks are durable (store::after_commit), call Channel::send for
//      each: no request leaves before its row is 'sending' on disk, so after a crash the
//      row is 'unknown', never sent twice. If that commit fails, the rows are back to
//      'approved' (rolled back) and the pump tries again after store_retry;
//   3. write the outcome:
//        Sent        complete_send
//        RetryAfter  retry_send, and the channel's next send waits `after` (rate limits,
//                    a refused token: its sends in flight still finish)
//        Failed      fail_send    (a send_failed escalation; window_closed when the
//                    channel says the reply window had closed)
//        Unknown     first Channel::resolve_unknown (a channel that can look it up answers
//                    again, that answer being final), else unknown_send (delivery_unknown)
//
// A written outcome is never dropped (a store::Redo unit of work, store/unit_of_work.h): a write refused
// with a retryable store::Error (busy, io, full), or lost with its round (the COMMIT or
// the WAL sync failed, so the round was rolled back), is written again after store_retry
// (the row stays 'sending' meanwhile and is not sent again); a write refused with a
// permanent error is logged as an error and counted (the row stays 'sending' and becomes
// 'unknown', with its escalation, at the next start).
//
// Threading: the loop's thread only. Channels must outlive the pump's sends (stop both,
// then let in-flight sends finish).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "connectors/channel.h"
#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"

namespace boost::asio {
class io_context;
}

namespace dispatchd::daemon {

// Writes one send outcome to the outbox (the store's transition for it). The pump's
// default; tests wrap it to inject failures.
using WriteOutcome = std::function<store::Result<void>(store::Database& db, std::int64_t action_id,
                                                       const connectors::SendOutcome& outcome, store::Time now)>;
[[nodiscard]] store::Result<void> write_outcome(store::Database& db, std::int64_t action_id,
                                                const connectors::SendOutcome& outcome, store::Time now);

struct PumpDeps {
  boost::asio::io_context& io;
  store::Database& db;
  std::function<store::Time()> now;
  WriteOutcome write = write_outcome;
  // The claimer recorded on each send (store::begin_send): this instance's id when several
  // share the database, "" on one machine.
  std::string instance;
};

struct PumpSettings {
  std::size_t max_in_flight = 32;               // sends in flight (or starting) per channel
  std::chrono::milliseconds store_retry{1000};  // before writing again what was not stored
};

// What the pump did for one channel since the process started.
struct LaneStats {
  std::string channel;
  std::size_t in_flight = 0;        // sends handed to the channel, outcome not yet back
  std::int64_t writes_retried = 0;  // outcomes whose write failed (retryable) or was lost, written again
  std::int64_t writes_failed = 0;   // outcomes whose write failed for good (logged)
};

class OutboxPump {
 public:
  OutboxPump(PumpDeps deps, PumpSettings settings = {});
  ~OutboxPump();
  OutboxPump(const OutboxPump&) = delete;
  OutboxPump& operator=(const OutboxPump&) = delete;

  // Sends `channel`'s rows from now on. Rows of the channel already 'sending' (what the
  // last run left there: store::recover_sending keeps them for channels that can look a
  // send up) go to Channel::resolve_unknown first; a channel that cannot tell has them
  // 'unknown' with a delivery_unknown escalation.
  void add(connectors::Channel& channel);
  // Sends what the outbox holds, soon (a handler posted to the loop). Call it after
  // decisions and on a timer.
  void pump();
  // The same in the caller's step: from a store::before_commit hook, the `sending` marks
  // join the round that holds the decisions (Agent::on_written).
  void pump_now();
  // Sends nothing of `channel` for `after` (unless a longer hold runs already): a provider's
  // pause another instance was told of (store::channel_holds). Nothing for a channel the
  // pump does not have. With PumpDeps::instance set, a RetryAfter this pump gets is stored
  // for the others the same way (store::hold_channel).
  void hold_channel(const std::string& channel, std::chrono::milliseconds after);
  // Takes nothing new; sends in flight still complete and their outcomes are written.
  void stop();

  // Sends of all channels handed to their channel, or marked `sending` and waiting for that
  // commit to leave: a draining daemon waits for both (a send that left while the process
  // exited would be `unknown` at the next start, and escalated, though it was delivered).
  std::size_t in_flight() const;
  std::vector<LaneStats> stats() const;

  struct State;  // opaque; public only for the .cpp's callbacks

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::daemon
