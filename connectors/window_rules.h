#pragma once
// The reply-window rule of each channel that has one (common/reply_window.h), by channel
// name, for readers that hold no channel object: the staff API's read thread and dispatchctl.
// The channels' own reply_window() applies the same rule to what the store says.

#include <string_view>

#include "common/reply_window.h"

namespace dispatchd::connectors {

// The rule of `channel` ("whatsapp": 24 hours, less the send margin); null for a channel
// without a window (gmail) or an unknown name. A WindowRuleOf.
WindowRule window_rule(std::string_view channel);

}  // namespace dispatchd::connectors
