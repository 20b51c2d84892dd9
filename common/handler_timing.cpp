#include "common/handler_timing.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace dispatchd::common {
namespace {

// From `start`, the end of the template argument or name that begins there: the first ',' or
// closing bracket at its own depth.
std::size_t argument_end(const std::string& text, std::size_t start) {
  int depth = 0;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<' || c == '(' || c == '{' || c == '[') {
      ++depth;
    } else if (c == '>' || c == ')' || c == '}' || c == ']') {
      if (depth == 0) return i;
      --depth;
    } else if (c == ',' && depth == 0) {
      return i;
    }
  }
  return text.size();
}

}  // namespace

std::string describe_handler(const char* mangled, std::size_t limit) {
  if (mangled == nullptr) return "an unnamed step";
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> demangled(abi::__cxa_demangle(mangled, nullptr, nullptr, &status),
                                                              &std::free);
  std::string name = status == 0 && demangled ? demangled.get() : mangled;
  if (const auto ours = name.find("dispatchd::"); ours != std::string::npos)
    name = name.substr(ours, argument_end(name, ours) - ours);
  if (name.size() > limit) name = name.substr(0, limit) + "...";
  return name;
}

}  // namespace dispatchd::common
