#pragma once
// The names of this process's threads, as `top -H` and perf show them
// (/proc/self/task/*/comm): for tests that a component names the threads it starts.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace dispatchd::test {

// How many of this process's threads are named `name` now.
inline int threads_named(const std::string& name) {
  int found = 0;
  std::error_code ignored;  // a thread that ends meanwhile leaves no entry to read
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ignored)) {
    std::ifstream comm(task.path() / "comm");
    std::string seen;
    if (std::getline(comm, seen) && seen == name) ++found;
  }
  return found;
}

// Whether a thread named `name` appears within 5 s: a thread names itself once it runs.
inline bool thread_named_soon(const std::string& name) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (threads_named(name) == 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace dispatchd::test
