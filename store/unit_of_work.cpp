#include "store/unit_of_work.h"

#include <utility>
#include <vector>

#include "store/round.h"

namespace dispatchd::store {

void commit_then(Database& db, std::function<void()> on_durable, std::function<void()> on_lost) {
  after_commit(db, [on_durable = std::move(on_durable), on_lost = std::move(on_lost)](bool durable) {
    const auto& then = durable ? on_durable : on_lost;
    if (then) then();
  });
}

struct Redo::State : std::enable_shared_from_this<State> {
  // A kept write, and whether it is the owner's own work (run) or its recovery (later).
  struct Kept {
    Write write;
    bool owned = false;
  };

  Database& db;
  Backoff backoff;
  Deps deps;
  std::vector<Kept> kept;
  int losses = 0;  // pauses in the current row of losses
  std::chrono::milliseconds pause{0};
  std::chrono::steady_clock::time_point paused_until{};

  State(Database& db_, Backoff backoff_, Deps deps_) : db(db_), backoff(backoff_), deps(std::move(deps_)) {
    if (!deps.now) deps.now = [] { return std::chrono::steady_clock::now(); };
  }

  bool paused() const { return deps.now() < paused_until; }

  void lost() {
    if (paused()) return;  // the same failing round, or one during its pause
    pause = exponential_backoff(backoff, ++losses);
    paused_until = deps.now() + pause;
    deps.wake_after(pause);
  }

  void stored() {
    losses = 0;
    pause = std::chrono::milliseconds(0);
  }

  void keep(Kept work) {
    kept.push_back(std::move(work));
    lost();
  }

  // Runs one write and ends its unit of work.
  void attempt(Kept work) {
    auto done = work.write(db);
    if (!done) {
      if (done.error().retryable()) keep(std::move(work));
      return;  // a permanent error: dropped (the write told whoever needs to know)
    }
    const bool owned = work.owned;
    store::commit_then(
        db,
        [weak = weak_from_this(), owned] {
          auto self = weak.lock();
          if (self && owned) self->stored();
        },
        [weak = weak_from_this(), work = std::move(work)]() mutable {
          if (auto self = weak.lock()) self->keep(std::move(work));
        });
  }
};

Redo::Redo(Database& db, Backoff backoff, Deps deps) : m_state(std::make_shared<State>(db, backoff, std::move(deps))) {}

Redo::~Redo() = default;

void Redo::commit_then(std::function<void()> on_durable, std::function<void()> on_lost) {
  store::commit_then(
      m_state->db,
      [weak = m_state->weak_from_this(), on_durable = std::move(on_durable)] {
        if (auto self = weak.lock()) self->stored();
        if (on_durable) on_durable();
      },
      [weak = m_state->weak_from_this(), on_lost = std::move(on_lost)] {
        if (auto self = weak.lock()) self->lost();
        if (on_lost) on_lost();
      });
}

void Redo::run(Write write) { m_state->attempt({std::move(write), true}); }

void Redo::later(Write write) { m_state->keep({std::move(write), false}); }

void Redo::failed() { m_state->lost(); }

void Redo::resume() {
  if (m_state->paused()) return;
  for (auto& work : std::exchange(m_state->kept, {})) m_state->attempt(std::move(work));
}

bool Redo::paused() const { return m_state->paused(); }
std::chrono::milliseconds Redo::pause() const { return m_state->pause; }
std::size_t Redo::kept() const { return m_state->kept.size(); }

}  // namespace dispatchd::store
