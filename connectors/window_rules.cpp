#include "connectors/window_rules.h"

#include "connectors/whatsapp/window.h"

namespace dispatchd::connectors {

WindowRule window_rule(std::string_view channel) {
  // The channels with a window; a channel added with one is listed here as well.
  if (channel == "whatsapp") return &whatsapp::send_window;
  return nullptr;
}

}  // namespace dispatchd::connectors
