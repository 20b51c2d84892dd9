#include "common/thread_name.h"

#include <catch2/catch.hpp>

#include <string>
#include <thread>

using dispatchd::common::name_this_thread;
using dispatchd::common::this_thread_name;

namespace {

// Runs `name_this_thread(name)` on a thread of its own (the test runner's thread keeps its
// name) and returns what the kernel then holds.
std::string named(std::string_view name) {
  std::string seen;
  std::thread([&] {
    name_this_thread(name);
    seen = this_thread_name();
  }).join();
  return seen;
}

}  // namespace

TEST_CASE("thread names: a short name is kept as given", "[common]") {
  CHECK(named("wal-sync") == "wal-sync");
  CHECK(named("") == "");
}

TEST_CASE("thread names: a name over 15 bytes is cut to its first 15", "[common]") {
  CHECK(named("http-client-transport") == "http-client-tra");
  CHECK(named("exactly-15-byte") == "exactly-15-byte");
}

TEST_CASE("thread names: each thread has its own", "[common]") {
  const std::string before = this_thread_name();
  CHECK(named("staff-reads") == "staff-reads");
  CHECK(this_thread_name() == before);
}
