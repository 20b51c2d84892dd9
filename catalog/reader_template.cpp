// Reading a template action's "template" object (docs/catalog.md, "Template actions").
#include <algorithm>
#include <tuple>

#include "catalog/internal/reader.h"
#include "common/json_access.h"
#include "common/text.h"

namespace dispatchd::catalog {
namespace {

std::string member_at(const std::string& at, std::string_view token) { return at + "/" + text::pointer_token(token); }

// Meta's template names: lower-case letters, digits and underscores, at most 512.
bool is_template_name(std::string_view name) {
  return !name.empty() && name.size() <= 512 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// A language code as WhatsApp lists them: "es", "en_US", "zh_HK", "fil".
bool is_language(std::string_view code) {
  const auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  const auto letter = [&](char c) { return lower(c) || (c >= 'A' && c <= 'Z'); };
  const std::size_t cut = code.find('_');
  const std::string_view base = code.substr(0, cut);
  if (base.size() < 2 || base.size() > 3 || !std::all_of(base.begin(), base.end(), lower)) return false;
  if (cut == std::string_view::npos) return true;
  const std::string_view region = code.substr(cut + 1);
  return region.size() >= 2 && region.size() <= 4 && std::all_of(region.begin(), region.end(), letter);
}

// A parameter as a template writes it: {{1}} (positional, from 1) or {{order_id}} (named).
bool is_parameter_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  if (std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) return name[0] != '0';
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

}  // namespace

void CatalogReader::read_template(Action& action, const Value& value, const std::string& at) {
  if (!value.IsObject()) {
    problem(at, "must be an object: {\"name\", \"language\", \"header\", \"body\", \"buttons\"}");
    return;
  }
  check_keys(value, at, {"name", "language", "header", "body", "buttons"});
  TemplateMessage out;
  const auto name = value.FindMember("name");
  if (name == value.MemberEnd() || !name->value.IsString() || !is_template_name(json::string_of(name->value)))
    problem(member_at(at, "name"), "must be the template's name: lower-case letters, digits and '_' (at most 512)");
  else
    out.name = json::string_of(name->value);
  const auto language = value.FindMember("language");
  if (language == value.MemberEnd() || !language->value.IsString() || !is_language(json::string_of(language->value)))
    problem(member_at(at, "language"), "must be the template's language code, e.g. \"en_US\" or \"es\"");
  else
    out.language = json::string_of(language->value);
  if (const auto it = value.FindMember("header"); it != value.MemberEnd())
    read_template_part(out, TemplatePart::header, 0, it->value, member_at(at, "header"));
  if (const auto it = value.FindMember("body"); it != value.MemberEnd())
    read_template_part(out, TemplatePart::body, 0, it->value, member_at(at, "body"));
  if (const auto it = value.FindMember("buttons"); it != value.MemberEnd()) {
    const std::string here = member_at(at, "buttons");
    if (!it->value.IsObject()) {
      problem(here, "must be an object: the button's position (\"0\" to \"9\") -> its parameters");
    } else {
      for (const auto& member : it->value.GetObject()) {
        const std::string_view index = json::string_of(member.name);
        if (index.size() != 1 || index[0] < '0' || index[0] > '9') {
          problem(member_at(here, index), "a button's position must be \"0\" to \"9\"");
          continue;
        }
        read_template_part(out, TemplatePart::button, index[0] - '0', member.value, member_at(here, index));
      }
    }
  }
  std::ranges::stable_sort(out.parameters, {}, [](const TemplateParameter& p) { return std::tuple(p.part, p.button); });
  action.template_message = std::move(out);
}

void CatalogReader::read_template_part(TemplateMessage& out, TemplatePart part, int button, const Value& value,
                                       const std::string& at) {
  if (!value.IsObject()) {
    problem(at, "must be an object: the template's parameter (\"1\" for {{1}}, \"name\" for {{name}}) -> a field");
    return;
  }
  for (const auto& member : value.GetObject()) {
    const std::string name(json::string_of(member.name));
    const std::string here = member_at(at, name);
    if (!is_parameter_name(name) && !(part == TemplatePart::header && template_send::is_media(name))) {
      problem(here,
              "unknown parameter " + text::quote(name) + ": a number from 1 ({{1}}), a lower-case name ({{name}})" +
                  (part == TemplatePart::header ? ", or \"image\", \"video\" or \"document\" (the media's link)" : ""));
      continue;
    }
    if (!member.value.IsString() || !m_catalog.find_field(json::string_of(member.value))) {
      problem(here, "must name a catalog field");
      continue;
    }
    out.parameters.push_back({part, button, name, std::string(json::string_of(member.value))});
  }
}

void CatalogReader::check_template(const Action& action, const std::string& at) {
  for (const auto& p : action.template_message->parameters) {
    const std::string where = p.part == TemplatePart::button
                                  ? at + "/buttons/" + std::to_string(p.button) + "/" + text::pointer_token(p.name)
                                  : member_at(member_at(at, template_send::to_string(p.part)), p.name);
    const Field* field = m_catalog.find_field(p.field);
    if (field == nullptr) continue;  // reported while reading
    const bool scalar = field->schema.type == FieldType::string || field->schema.type == FieldType::integer ||
                        field->schema.type == FieldType::number;
    // Meta refuses a template with a parameter left out: each one's field must be set.
    if (!action.needs(p.field) || !scalar)
      problem(where, text::quote(p.field) + " must be a string or number field the action requires");
    if (template_send::is_media(p.name) && field->schema.type != FieldType::string)
      problem(where, "the media's link must be a string field");
  }
}

}  // namespace dispatchd::catalog
