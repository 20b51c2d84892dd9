#include "connectors/registry.h"

#include <array>

#include "common/settings_reader.h"
#include "connectors/gmail/section.h"
#include "connectors/imap/section.h"
#include "connectors/whatsapp/section.h"

namespace dispatchd::connectors {
namespace {

// The registration: one line per channel kind.
const std::array<const Kind*, 3> k_kinds = {&whatsapp::kind(), &gmail::kind(), &imap::kind()};

}  // namespace

std::span<const Kind* const> kinds() { return k_kinds; }

std::vector<std::string> kind_names() {
  std::vector<std::string> names;
  for (const Kind* kind : k_kinds) names.emplace_back(kind->name);
  return names;
}

const Kind* find_kind(std::string_view name) {
  for (const Kind* kind : k_kinds) {
    if (kind->name == name) return kind;
  }
  return nullptr;
}

std::expected<std::vector<Configured>, std::vector<std::string>> configure(const config::Config& config) {
  json::SettingsReader reader(config.path);
  for (const auto& [name, section] : config.connectors) {
    if (find_kind(name)) continue;
    std::string known;
    for (const Kind* kind : k_kinds) known += (known.empty() ? "" : ", ") + std::string(kind->name);
    reader.problem(section.at, "unknown key (known here: " + known + "): no such channel");
  }
  std::vector<Configured> out;
  for (const Kind* kind : k_kinds) {
    const auto found = config.connectors.find(std::string(kind->name));
    const config::ChannelSection defaults{"{}", "/connectors/" + std::string(kind->name)};
    auto section = kind->read(found == config.connectors.end() ? defaults : found->second, reader, config);
    if (section) out.push_back({kind, std::move(section)});
  }
  if (!reader.problems().empty()) return std::unexpected(std::move(reader.problems()));
  return out;
}

std::vector<std::string> section_problems(const config::Config& config) {
  auto configured = configure(config);
  return configured ? std::vector<std::string>{} : std::move(configured.error());
}

}  // namespace dispatchd::connectors
