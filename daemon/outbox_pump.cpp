#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "daemon/outbox_pump.h"

#include <spdlog/spdlog.h>
#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <variant>

#include "store/instances.h"
#include "store/outbox.h"
#include "store/round.h"
#include "store/unit_of_work.h"

namespace dispatchd::daemon {
namespace {

using Clock = std::chrono::steady_clock;

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};

// Result<T> as Result<void>: the escalation id of a failed send is in the store.
template <typename T>
store::Result<void> without_value(store::Result<T> result) {
  if (!result) return std::unexpected(std::move(result.error()));
  return {};
}

}  // namespace

store::Result<void> write_outcome(store::Database& db, std::int64_t id, const connectors::SendOutcome& outcome,
                                  store::Time now) {
  return std::visit(
      Overloaded{
          [&](const connectors::Sent& s) { return store::complete_send(db, id, s.provider_message_id, now); },
          [&](const connectors::RetryAfter& r) { return store::retry_send(db, id, r.why, now); },
          [&](const connectors::Failed& f) { return without_value(store::fail_send(db, id, f.why, now, f.because)); },
          [&](const connectors::Unknown& u) { return without_value(store::unknown_send(db, id, u.why, now)); },
      },
      outcome);
}

struct OutboxPump::State : std::enable_shared_from_this<State> {
  // One channel's sends.
  struct Lane {
    Lane(connectors::Channel& c, boost::asio::io_context& io, std::size_t max_in_flight)
        : channel(&c), name(c.name()), hold_timer(io) {
      in_flight.reserve(max_in_flight);
    }
    connectors::Channel* channel;
    std::string name;  // begin_send's filter
    // Handed to the channel; capacity reserved: send() reads one by reference. Sends a
    // previous run left 'sending' (recover) may pass the capacity: they are looked up, not
    // sent, and are started before any send.
    std::vector<store::OutboxItem> in_flight;
    std::size_t starting = 0;        // begun, waiting for the commit before their requests leave
    Clock::time_point held_until{};  // RetryAfter: no new send before
    boost::asio::steady_timer hold_timer;
    std::int64_t writes_retried = 0;
    std::int64_t writes_failed = 0;
  };
  // A send's outcome on its way to the outbox.
  struct Transition {
    std::size_t lane;
    std::int64_t action_id;
    connectors::SendOutcome outcome;
    store::Time at;
  };

  PumpDeps deps;
  PumpSettings settings;
  std::vector<std::unique_ptr<Lane>> lanes;
  bool stopping = false;
  bool pump_posted = false;
  // Brings the pump back when a store pause ends (Redo's wake_after).
  boost::asio::steady_timer store_timer;
  // Outcomes whose write failed (retryable) or was lost with its round: written again after
  // store_retry, until stored (the store's unit of work). Their rows stay 'sending' meanwhile.
  store::Redo redo;

  State(PumpDeps d, PumpSettings s)
      : deps(std::move(d)),
        settings(s),
        store_timer(deps.io),
        redo(deps.db, {settings.store_retry, settings.store_retry},
             {.wake_after = [this](std::chrono::milliseconds delay) { wake_after(delay); }}) {}

  void schedule_pump();
  void pump();
  void fill(std::size_t lane);
  void start(std::size_t lane, store::OutboxItem item);
  connectors::SendDone on_outcome(std::size_t lane, std::int64_t id, bool resolving);
  void finish(std::size_t lane, std::int64_t id, connectors::SendOutcome outcome, bool resolving);
  void hold(Lane& lane, std::chrono::milliseconds after);
  void share_hold(Lane& lane, std::chrono::milliseconds after);
  void recover(std::size_t lane);
  void record_until_durable(Transition t);
  void wake_after(std::chrono::milliseconds delay);
};

void OutboxPump::State::schedule_pump() {
  // Coalesced: what is decided in this round of the event loop starts with one durable
  // commit of the `sending` marks.
  if (pump_posted) return;
  pump_posted = true;
  boost::asio::post(deps.io, [weak = weak_from_this()] {
    auto self = weak.lock();
    if (!self) return;
    self->pump_posted = false;
    self->pump();
  });
}

void OutboxPump::State::pump() {
  // What was not stored is written again once the store's pause is over.
  redo.resume();
  for (std::size_t i = 0; i < lanes.size(); ++i) fill(i);
}

void OutboxPump::State::fill(std::size_t index) {
  Lane& lane = *lanes[index];
  if (stopping || Clock::now() < lane.held_until) return;
  std::vector<store::OutboxItem> batch;
  while (lane.in_flight.size() + lane.starting + batch.size() < settings.max_in_flight) {
    auto item = store::begin_send(deps.db, deps.now(), lane.name, deps.instance);
    if (!item) {
      spdlog::error("{}: outbox: {}", lane.name, item.error().message);
      if (item.error().retryable()) redo.failed();
      break;
    }
    if (!*item) break;
    batch.push_back(std::move(**item));
  }
  if (batch.empty()) return;
  // `sending` is on disk before any of these requests leaves: after a crash the action is
  // `unknown`, never sent twice.
  lane.starting += batch.size();
  store::after_commit(deps.db, [weak = weak_from_this(), index, batch = std::move(batch)](bool committed) mutable {
    auto self = weak.lock();
    if (!self) return;
    Lane& began = *self->lanes[index];
    began.starting -= batch.size();
    if (!committed) {
      spdlog::error("{}: the commit before {} send(s) failed; they stay in the outbox", began.name, batch.size());
      return self->redo.failed();
    }
    for (auto& item : batch) self->start(index, std::move(item));
    self->schedule_pump();
  });
}

void OutboxPump::State::start(std::size_t index, store::OutboxItem item) {
  Lane& lane = *lanes[index];
  const std::int64_t id = item.id;
  // No reallocation (capacity is max_in_flight), so the reference stays good during send().
  lane.in_flight.push_back(std::move(item));
  lane.channel->send(lane.in_flight.back(), on_outcome(index, id, false));
}

connectors::SendDone OutboxPump::State::on_outcome(std::size_t index, std::int64_t id, bool resolving) {
  return [weak = weak_from_this(), index, id, resolving](connectors::SendOutcome outcome) mutable {
    if (auto self = weak.lock()) self->finish(index, id, std::move(outcome), resolving);
  };
}

void OutboxPump::State::finish(std::size_t index, std::int64_t id, connectors::SendOutcome outcome, bool resolving) {
  Lane& lane = *lanes[index];
  const auto item = std::ranges::find(lane.in_flight, id, &store::OutboxItem::id);
  if (item == lane.in_flight.end()) {
    spdlog::error("{}: an outcome for action {}, which is not in flight: ignored", lane.name, id);
    return;
  }
  if (!resolving && std::holds_alternative<connectors::Unknown>(outcome)) {
    // A channel that can look the message up answers again; that answer is final.
    auto again = on_outcome(index, id, true);
    if (lane.channel->resolve_unknown(*item, again)) return;
  }
  // Order does not matter: swap with the last, then drop it.
  std::iter_swap(item, lane.in_flight.end() - 1);
  lane.in_flight.pop_back();
  if (const auto* retry = std::get_if<connectors::RetryAfter>(&outcome)) {
    hold(lane, retry->after);
    share_hold(lane, retry->after);
  }
  record_until_durable({index, id, std::move(outcome), deps.now()});
  schedule_pump();
}

void OutboxPump::State::recover(std::size_t index) {
  Lane& lane = *lanes[index];
  // Only this instance's own: another live instance's sends in 'sending' are in flight.
  auto items = store::sending_items(deps.db, lane.name, deps.instance);
  if (!items) {
    spdlog::error("{}: cannot read the sends the last run left unfinished ({}); they wait for the next start",
                  lane.name, items.error().message);
    return;
  }
  if (items->empty()) return;
  spdlog::info("{}: looking up {} send(s) the last run left unfinished", lane.name, items->size());
  // Stored first, asked after: a lookup's answer may come back while the next is asked.
  lane.in_flight.reserve(lane.in_flight.size() + items->size());
  for (auto& item : *items) lane.in_flight.push_back(std::move(item));
  std::vector<std::int64_t> ids;
  for (const auto& item : lane.in_flight) ids.push_back(item.id);
  for (const auto id : ids) {
    auto again = on_outcome(index, id, true);
    const auto item = std::ranges::find(lane.in_flight, id, &store::OutboxItem::id);
    if (!lane.channel->resolve_unknown(*item, again)) {
      finish(index, id, connectors::Unknown{"dispatchd stopped between marking the send and recording its result"},
             true);
    }
  }
}

void OutboxPump::State::hold(Lane& lane, std::chrono::milliseconds after) {
  const auto until = Clock::now() + after;
  if (until <= lane.held_until) return;  // a longer hold already runs (e.g. a refused token's)
  lane.held_until = until;
  lane.hold_timer.expires_at(until);
  lane.hold_timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self) return;
    self->schedule_pump();
  });
}

// Several instances: the provider paces the deployment, so the others hold too (they read
// store::channel_holds each second). A hold that cannot be stored still holds this instance.
void OutboxPump::State::share_hold(Lane& lane, std::chrono::milliseconds after) {
  if (deps.instance.empty()) return;
  const auto now = deps.now();
  const auto until = now + std::chrono::ceil<std::chrono::seconds>(after);
  if (auto stored = store::hold_channel(deps.db, lane.name, until, deps.instance, now); !stored)
    spdlog::warn("{}: the provider's pause is not shared with the other instances: {}", lane.name,
                 stored.error().message);
}

// `t` is written as a unit of work of the store's: a retryable refusal, or a round that does
// not become durable, has it written again after store_retry (store::Redo). A Write runs on
// the loop while the State (which owns the Redo) lives, so it may use `this`.
void OutboxPump::State::record_until_durable(Transition t) {
  redo.run([this, t = std::move(t), runs = 0](store::Database& db) mutable -> store::Result<void> {
    Lane& lane = *lanes[t.lane];
    if (runs++ > 0) ++lane.writes_retried;
    auto written = deps.write(db, t.action_id, t.outcome, t.at);
    if (!written && written.error().retryable()) {
      spdlog::warn("{}: cannot record the outcome of action {} yet ({}); trying again", lane.name, t.action_id,
                   written.error().message);
    } else if (!written) {
      ++lane.writes_failed;
      spdlog::error("{}: cannot record the outcome of action {}: {}; it stays 'sending' until the next start",
                    lane.name, t.action_id, written.error().message);
    }
    return written;
  });
}

void OutboxPump::State::wake_after(std::chrono::milliseconds delay) {
  // Its own timer: a channel's hold must not be cut short by it. Outcomes are written again
  // even while stopping: their requests have left.
  store_timer.expires_after(delay);
  store_timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self) return;
    self->schedule_pump();
  });
}

OutboxPump::OutboxPump(PumpDeps deps, PumpSettings settings)
    : m_state(std::make_shared<State>(std::move(deps), settings)) {}

OutboxPump::~OutboxPump() { stop(); }

void OutboxPump::add(connectors::Channel& channel) {
  m_state->lanes.push_back(std::make_unique<State::Lane>(channel, m_state->deps.io, m_state->settings.max_in_flight));
  m_state->recover(m_state->lanes.size() - 1);
}

void OutboxPump::pump() { m_state->schedule_pump(); }

void OutboxPump::pump_now() { m_state->pump(); }

void OutboxPump::hold_channel(const std::string& channel, std::chrono::milliseconds after) {
  for (auto& lane : m_state->lanes)
    if (lane->name == channel) m_state->hold(*lane, after);
}

void OutboxPump::stop() {
  m_state->stopping = true;
  for (auto& lane : m_state->lanes) lane->hold_timer.cancel();
}

std::size_t OutboxPump::in_flight() const {
  std::size_t n = 0;
  for (const auto& lane : m_state->lanes) n += lane->in_flight.size() + lane->starting;
  return n;
}

std::vector<LaneStats> OutboxPump::stats() const {
  std::vector<LaneStats> out;
  for (const auto& lane : m_state->lanes)
    out.push_back({lane->name, lane->in_flight.size(), lane->writes_retried, lane->writes_failed});
  return out;
}

}  // namespace dispatchd::daemon
