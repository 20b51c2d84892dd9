#include "connectors/whatsapp/window.h"

namespace dispatchd::whatsapp {

bool may_send_free_form(std::optional<std::chrono::sys_seconds> last_inbound, std::chrono::sys_seconds now,
                        std::chrono::seconds safety_margin) {
  if (!last_inbound) return false;
  if (*last_inbound > now) return true;
  return now + safety_margin < window_closes_at(*last_inbound);
}

ReplyWindow reply_window_at(std::optional<std::chrono::sys_seconds> last_inbound, std::chrono::sys_seconds now,
                            std::chrono::seconds safety_margin) {
  ReplyWindow window{may_send_free_form(last_inbound, now, safety_margin), std::nullopt};
  if (last_inbound) window.closes_at = window_closes_at(*last_inbound);
  return window;
}

ReplyWindow send_window(std::optional<std::chrono::sys_seconds> last_inbound, std::chrono::sys_seconds now) {
  return reply_window_at(last_inbound, now, k_send_margin);
}

}  // namespace dispatchd::whatsapp
