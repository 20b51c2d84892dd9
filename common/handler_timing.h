#pragma once
// How long each step of an event loop held its thread: the time Asio spends inside each
// completion handler it runs there (a posted function, a timer, a socket's read or write
// completion), measured through Asio's custom handler tracking (net/asio_handler_hooks.h,
// named for every target that compiles Asio: see net/CMakeLists.txt).
//
// Why: the daemon's loop promises that no single step holds it for more than 10 ms, since
// every webhook, health check and send waits behind the step that runs. A benchmark can
// probe that from outside; production cannot, so /metrics shows this histogram and the
// longest step since start.
//
// Only a thread that installed a HandlerTimes (TimeHandlers) is timed; on any other thread
// (the HTTP client's, a test's) the hooks cost one thread-local test. A handler that Asio
// runs inside another one (a dispatch) counts as part of the outer one: the thread was held
// for the outer one's whole time. Each step is known by the type of Asio's operation that ran
// it (its mangled name, e.g. an executor_op around the lambda a function posted), so a slow
// one can be named in the log (describe_handler); a function posted type-erased names
// itself with named_step.
//
// Thread-safety: a HandlerTimes is written and read on the thread it times.

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>

#include "common/histogram.h"

namespace dispatchd::common {

// Upper bounds of the loop's histogram buckets, in microseconds (+Inf is implied).
inline constexpr std::array<std::int64_t, 7> k_loop_step_bounds_us = {1'000,   5'000,   10'000,   50'000,
                                                                      100'000, 500'000, 1'000'000};

class HandlerTimes {
 public:
  static constexpr const auto& k_bounds_us = k_loop_step_bounds_us;

  // A step over this long is slow (the daemon's bound): counted for take_slow.
  static constexpr std::int64_t k_slow_us = 10'000;

  // `type`: the mangled name of the operation's type (typeid), or null.
  void add(std::chrono::nanoseconds took, const char* type = nullptr) {
    const std::int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(took).count();
    m_steps.add(us);
    if (us > k_slow_us) {
      ++m_slow.count;
      if (us > m_slow.longest_us) {
        m_slow.longest_us = us;
        m_slow.type = type;
      }
    }
  }

  // The steps over k_slow_us since the last call, and the longest of them; none when there
  // were none.
  struct Slow {
    std::int64_t count = 0;
    std::int64_t longest_us = 0;
    const char* type = nullptr;  // the longest one's operation (mangled), or null
  };
  std::optional<Slow> take_slow() {
    if (m_slow.count == 0) return std::nullopt;
    return std::exchange(m_slow, Slow{});
  }

  using Snapshot = Histogram<k_loop_step_bounds_us>;
  Snapshot snapshot() const { return m_steps; }

 private:
  Snapshot m_steps;
  Slow m_slow;
};

// A readable name for a step from its operation's mangled type name: the first of
// dispatchd's own names inside it (the lambda or member function the handler is, e.g.
// "dispatchd::store::Round::State::commit()::{lambda()#1}"), else the whole demangled name,
// cut to `limit` characters. "an unnamed step" for null.
std::string describe_handler(const char* mangled, std::size_t limit = 200);

namespace handler_timing {
// The hooks' state for the calling thread: which HandlerTimes (none: not timed), how deep in
// nested handlers, and when the outermost began.
inline thread_local HandlerTimes* t_times = nullptr;
inline thread_local int t_depth = 0;
inline thread_local std::chrono::steady_clock::time_point t_began;
// The operation Asio is completing (set just before its handler begins), and the outermost
// one running.
inline thread_local const char* t_completing = nullptr;
inline thread_local const char* t_running = nullptr;

inline void completing(const char* type) noexcept { t_completing = type; }

inline void begin() noexcept {
  if (t_times == nullptr) return;
  if (t_depth++ == 0) {
    t_running = t_completing;
    t_began = std::chrono::steady_clock::now();
  }
}

// Names the running step by `type` instead of the operation Asio ran (see named_step).
inline void name_step(const char* type) noexcept {
  if (t_depth == 1) t_running = type;
}

// A handler that began before TimeHandlers was installed (t_depth 0) is not counted.
inline void end() noexcept {
  if (t_depth == 0) return;
  if (--t_depth == 0 && t_times != nullptr) t_times->add(std::chrono::steady_clock::now() - t_began, t_running);
}
}  // namespace handler_timing

// `f`, wrapped so that the step it runs in is named by f's own type. A function posted as a
// std::function or std::move_only_function (a Post callback: store::Round's, a channel's; a
// transport's callback, which net::ThreadedTransport posts back) reaches Asio with its type
// erased, and every such step would be named alike. Takes and returns what `f` does.
template <class F>
auto named_step(F f) {
  return [f = std::move(f)](auto&&... args) mutable -> decltype(auto) {
    handler_timing::name_step(typeid(F).name());
    return f(std::forward<decltype(args)>(args)...);
  };
}

// Times the handlers run on the calling thread into `times` while it lives. Created and
// destroyed on that thread, outside any handler (before io_context::run, and after it);
// `times` must outlive it.
class TimeHandlers {
 public:
  explicit TimeHandlers(HandlerTimes& times) : m_previous(handler_timing::t_times) {
    handler_timing::t_times = &times;
    handler_timing::t_depth = 0;
  }
  ~TimeHandlers() {
    handler_timing::t_times = m_previous;
    handler_timing::t_depth = 0;
  }
  TimeHandlers(const TimeHandlers&) = delete;
  TimeHandlers& operator=(const TimeHandlers&) = delete;

 private:
  HandlerTimes* m_previous;
};

}  // namespace dispatchd::common
