#pragma once
// The customer-service window: a business may send free-form messages (such as text) to a
// WhatsApp user only within 24 hours of that user's last message; after that only
// approved templates reach them (Graph refuses with 131047, errors.h: window_closed).
//
// Pure: `now` is passed in. The channel counts from when the customer's latest message was
// received (store::last_inbound_at: inbox.received_at); the customer's own timestamp is not
// stored, so a webhook delivered late makes the window look longer and Graph's 131047 decides.

#include <chrono>
#include <optional>

#include "common/reply_window.h"

namespace dispatchd::whatsapp {

constexpr std::chrono::hours k_service_window{24};

// When the window opened by a message sent at `last_inbound` closes.
constexpr std::chrono::sys_seconds window_closes_at(std::chrono::sys_seconds last_inbound) {
  return last_inbound + k_service_window;
}

// True when a free-form text may be sent at `now`: the contact has written to us
// (`last_inbound`, nullopt when never) and `now` is before the window closes less
// `safety_margin` (time the send itself may take, so that a message decided at 23:59:59
// is not refused on arrival). A last inbound time later than `now` (clock skew) counts as
// just received.
bool may_send_free_form(std::optional<std::chrono::sys_seconds> last_inbound, std::chrono::sys_seconds now,
                        std::chrono::seconds safety_margin = std::chrono::seconds{0});

// The window as the channel seam states it: open as may_send_free_form says, closing (or
// closed) at window_closes_at(last_inbound); never written: closed, with no time.
ReplyWindow reply_window_at(std::optional<std::chrono::sys_seconds> last_inbound, std::chrono::sys_seconds now,
                            std::chrono::seconds safety_margin = std::chrono::seconds{0});

// Time a send may take, so that a message decided at 23:59:59 is not refused on arrival: a
// window closing within it counts as closed already.
constexpr std::chrono::seconds k_send_margin{60};

// The window as a send sees it (reply_window_at with k_send_margin): the channel's rule for
// the agent, the send's check, the staff desk and dispatchctl (common/reply_window.h).
ReplyWindow send_window(std::optional<std::chrono::sys_seconds> last_inbound, std::chrono::sys_seconds now);

}  // namespace dispatchd::whatsapp
