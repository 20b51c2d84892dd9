#include "connectors/whatsapp/window.h"

namespace dispatchd::whatsapp {

bool may_send_free_form(std::optional<std::chrono::sys_seconds> last_inbound, std::chrono::sys_seconds now,
                        std::chrono::seconds safety_margin) {
  if (!last_inbound) return false;
  if (*last_inbound > now) return true;
  return now + safety_margin < window_closes_at(*last_inbound);
}

}  // namespace dispatchd::whatsapp
