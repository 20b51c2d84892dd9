#pragma once
// A channel's reply window, channel-neutral: whether a business may write free-form (a text
// of its own, not a pre-approved template) to a counterpart now, and until when. A channel
// with such a rule says so through connectors::Channel::reply_window (WhatsApp: 24 hours
// after the customer's last message); the agent tells the model and refuses free-form
// replies while it is closed (validator::Context::window_closed). A channel without one
// (Gmail) has no window at all: nullopt, not an open one.

#include <chrono>
#include <optional>
#include <string_view>

namespace dispatchd {

struct ReplyWindow {
  bool open = false;
  // When it closes (open), or closed (not open; nullopt when the counterpart never wrote).
  std::optional<std::chrono::sys_seconds> closes_at;
};

// A channel's window as a pure rule: the window at `now` for a counterpart whose latest
// message was received at `last_inbound` (nullopt: never). No state, so readers that hold no
// channel (the staff API's read thread, dispatchctl) use it on any thread.
using WindowRule = ReplyWindow (*)(std::optional<std::chrono::sys_seconds> last_inbound, std::chrono::sys_seconds now);
// The rule of a channel by name; null for a channel without a window.
using WindowRuleOf = WindowRule (*)(std::string_view channel);

}  // namespace dispatchd
