#include "catalog/catalog.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "catalog/internal/reader.h"
#include "common/strict_json.h"

namespace dispatchd::catalog {

bool Action::uses(std::string_view field) const {
  return needs(field) || std::find(optional.begin(), optional.end(), field) != optional.end();
}

bool Action::needs(std::string_view field) const {
  return std::find(required.begin(), required.end(), field) != required.end();
}

std::string Problem::to_string() const { return file + ":" + (pointer.empty() ? "/" : pointer) + ": " + message; }

const Action* Catalog::find_action(std::string_view name) const {
  for (const auto& action : m_actions) {
    if (action.name == name) return &action;
  }
  return nullptr;
}

const Field* Catalog::find_field(std::string_view name) const {
  for (const auto& field : m_fields) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

bool Catalog::required_by_all(std::string_view field) const {
  return std::all_of(m_actions.begin(), m_actions.end(), [&](const Action& action) { return action.needs(field); });
}

std::expected<Catalog, std::vector<Problem>> Catalog::parse(std::string_view text, std::string origin) {
  return CatalogReader(std::move(origin)).read(text);
}

std::expected<Catalog, std::vector<Problem>> Catalog::load_file(const std::string& path) {
  constexpr std::size_t k_max_bytes = 1 << 20;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(std::vector<Problem>{{path, "", "cannot open the file"}});
  std::string text;
  text.resize(k_max_bytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) return std::unexpected(std::vector<Problem>{{path, "", "cannot read the file"}});
  if (text.size() > k_max_bytes) {
    return std::unexpected(std::vector<Problem>{{path, "", "larger than 1 MiB"}});
  }
  return parse(text, path);
}

const char* to_string(FieldType type) {
  switch (type) {
    case FieldType::string: return "string";
    case FieldType::integer: return "integer";
    case FieldType::number: return "number";
    case FieldType::boolean: return "boolean";
    case FieldType::buttons: return "buttons";
    case FieldType::list: return "list";
  }
  return "?";
}

const char* to_string(ActionKind kind) {
  switch (kind) {
    case ActionKind::reply: return "reply";
    case ActionKind::escalate: return "escalate";
    case ActionKind::ignore: return "ignore";
    case ActionKind::http: return "http";
    case ActionKind::mcp: return "mcp";
    case ActionKind::template_message: return "template";
  }
  return "?";
}

const char* to_string(McpUse use) {
  switch (use) {
    case McpUse::lookup: return "lookup";
    case McpUse::act: return "act";
  }
  return "?";
}

const std::string& McpTool::argument_of(const std::string& field) const {
  const auto it = arguments.find(field);
  return it == arguments.end() ? field : it->second;
}

}  // namespace dispatchd::catalog
