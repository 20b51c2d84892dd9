#include "common/template_send.h"

#include "common/json_access.h"
#include "common/json_out.h"
#include "common/strict_json.h"

namespace dispatchd::template_send {

const char* to_string(Part part) {
  switch (part) {
    case Part::header: return "header";
    case Part::body: return "body";
    case Part::button: return "button";
  }
  return "?";
}

bool is_media(std::string_view name) { return name == "image" || name == "video" || name == "document"; }

std::optional<std::string> text_parameter_problem(std::string_view value) {
  if (value.find_first_of("\r\n") != std::string_view::npos) return "has a line break";
  if (value.find('\t') != std::string_view::npos) return "has a tab";
  // Four spaces in a row pass; the fifth is what WhatsApp refuses.
  if (value.find("     ") != std::string_view::npos) return "has more than 4 spaces in a row";
  return std::nullopt;
}

std::string to_json(const TemplateSend& send) {
  JsonOut out;
  out.begin_object().field("name", send.name).field("language", send.language).begin_array("parameters");
  for (const auto& p : send.parameters) {
    out.begin_object().field("part", to_string(p.part));
    if (p.part == Part::button) out.field("button", p.button);
    out.field("name", p.name).field("value", p.value).end_object();
  }
  out.end_array().end_object();
  return out.str();
}

std::expected<TemplateSend, std::string> parse_stored(std::string_view json) {
  auto parsed = json::parse_strict(json, json::k_checked_json_limits);
  if (!parsed || !parsed->document.IsObject()) return std::unexpected("the stored template is not a JSON object");
  const rapidjson::Value& doc = parsed->document;
  TemplateSend out;
  auto name = json::string_member(doc, "name");
  auto language = json::string_member(doc, "language");
  const rapidjson::Value* parameters = json::array_member(doc, "parameters");
  if (!name || !language || parameters == nullptr)
    return std::unexpected("the stored template lacks its name, language or parameters");
  out.name = std::move(*name);
  out.language = std::move(*language);
  for (const auto& item : parameters->GetArray()) {
    auto part = json::string_member(item, "part");
    auto pname = json::string_member(item, "name");
    auto value = json::string_member(item, "value");
    if (!part || !pname || !value) return std::unexpected("a stored template parameter lacks its part, name or value");
    Parameter p{Part::body, 0, std::move(*pname), std::move(*value)};
    if (*part == "header")
      p.part = Part::header;
    else if (*part == "button")
      p.part = Part::button, p.button = static_cast<int>(json::int_member(item, "button").value_or(0));
    else if (*part != "body")
      return std::unexpected("unknown template part " + *part);
    out.parameters.push_back(std::move(p));
  }
  return out;
}

std::string summary(const TemplateSend& send) {
  std::string out = "template " + send.name + " (" + send.language + ")";
  char sep = ':';
  for (const auto& p : send.parameters) {
    out += sep;
    out += ' ';
    if (p.part != Part::body)
      out += std::string(to_string(p.part)) + (p.part == Part::button ? " " + std::to_string(p.button) : "") + " ";
    out += p.name + " = " + p.value;
    sep = ',';
  }
  return out;
}

}  // namespace dispatchd::template_send
