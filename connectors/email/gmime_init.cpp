#include <gmime/gmime.h>

#include <mutex>

#include "connectors/email/internal/gmime.h"

namespace dispatchd::email::detail {

void ensure_gmime() {
  static std::once_flag once;
  std::call_once(once, [] { g_mime_init(); });
}

}  // namespace dispatchd::email::detail
