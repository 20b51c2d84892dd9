#include "common/thread_name.h"

#include <cassert>

#include <pthread.h>

namespace dispatchd::common {

void name_this_thread(std::string_view name) {
  const std::string kept(name.substr(0, kMaxThreadName));
  // Its one failure is ERANGE, a name over 15 bytes, which the cut above rules out.
  [[maybe_unused]] const int refused = pthread_setname_np(pthread_self(), kept.c_str());
  assert(refused == 0);
}

std::string this_thread_name() {
  char name[kMaxThreadName + 1] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof name) != 0) return {};
  return name;
}

}  // namespace dispatchd::common
