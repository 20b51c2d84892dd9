#include "web/assets.h"

#include <array>
#include <utility>

#include "web/internal/embedded.h"

namespace dispatchd::web {
namespace {

// Only the types the page is made of: a file of another kind is not served rather than
// served as something a browser might sniff.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> k_types{{
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
}};

std::optional<std::string_view> type_of(std::string_view name) {
  for (const auto& [suffix, type] : k_types) {
    if (name.ends_with(suffix)) return type;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Asset> staff_asset(std::string_view path) {
  constexpr std::string_view k_prefix = "/staff/";
  if (!path.starts_with(k_prefix)) return std::nullopt;
  std::string_view name = path.substr(k_prefix.size());
  if (name.empty()) name = "index.html";
  // The lookup is by exact name in a fixed table, so "..", "%2e" or "a/b" simply match
  // nothing: no path ever reaches a file system.
  for (const internal::EmbeddedFile& file : internal::staff_files()) {
    if (file.name != name) continue;
    const auto type = type_of(name);
    if (!type) return std::nullopt;
    return Asset{*type, file.body};
  }
  return std::nullopt;
}

}  // namespace dispatchd::web
