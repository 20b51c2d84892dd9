// Fuzz target: the configuration reader (config::parse, what config::load runs on the
// file's text; comments allowed), then the channels' sections (connectors::configure). Invariants: every refusal names
// at least one problem, and an accepted configuration keeps the documented bounds it checks (a port, a listen address
// split into host and port, an entry for every message type).

#include <algorithm>
#include <string>
#include <string_view>

#include "config/config.h"
#include "connectors/registry.h"
#include "fuzz/fuzz.h"

namespace {

using namespace dispatchd;

constexpr const char* k_target = "config";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A path under a folder that does not exist: relative paths resolve against it and
  // nothing is read (the reader itself reads no other file).
  const auto parsed = config::parse(std::string(fuzz::text(data, size)), "/nonexistent/fuzz/dispatchd.json");
  if (!parsed) {
    fuzz::require(!parsed.error().empty(), k_target, "a refusal without a problem");
    return 0;
  }
  fuzz::require(!parsed->http.host.empty(), k_target, "an accepted listen address without a host");
  const std::string_view listen = parsed->http.listen;
  const std::string_view port = listen.substr(std::min(listen.size(), parsed->http.host.size() + 1));
  fuzz::require(listen.starts_with(parsed->http.host + ":") && !port.empty() &&
                    std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }),
                k_target, "an accepted listen address that is not HOST:PORT");
  fuzz::require(parsed->http.max_body_bytes > 0, k_target, "a zero body limit accepted");
  // The channels read their own sections (connectors/registry.h): the same input, read on.
  const auto channels = connectors::configure(*parsed);
  if (!channels) {
    fuzz::require(!channels.error().empty(), k_target, "a channel's refusal without a problem");
    return 0;
  }
  fuzz::require(channels->size() == connectors::kinds().size(), k_target, "a channel kind without its section");
  for (const auto& [kind, section] : *channels)
    fuzz::require(!section->message_types().empty(), k_target, "a channel without its message types");
  return 0;
}
