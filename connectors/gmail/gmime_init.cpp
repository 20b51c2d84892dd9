#include <gmime/gmime.h>

#include <mutex>

#include "connectors/gmail/internal/gmime.h"

namespace dispatchd::gmail::detail {

void ensure_gmime() {
  static std::once_flag once;
  std::call_once(once, [] { g_mime_init(); });
}

}  // namespace dispatchd::gmail::detail
