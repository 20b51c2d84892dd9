#include "connectors/whatsapp/template_message.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "common/json_access.h"
#include "common/json_out.h"
#include "common/strict_json.h"
#include "common/utf8.h"

namespace dispatchd::whatsapp {
namespace {

using template_send::Part;
using Key = std::tuple<Part, int, std::string>;  // part, button, parameter name

// What a stored template takes: its parameters, its header's format and its buttons' types.
struct Shape {
  std::set<Key> parameters;
  std::string header_format;              // "TEXT", "IMAGE", ..., "" without a header
  std::vector<std::string> button_types;  // "URL", "QUICK_REPLY", ...
  bool body_only = true;                  // no header, footer or buttons
};

std::optional<Part> part_of(std::string_view component) {
  if (component == "header") return Part::header;
  if (component == "body") return Part::body;
  if (component == "button") return Part::button;
  return std::nullopt;
}

Shape shape_of(const store::Template& stored) {
  Shape out;
  if (auto parsed = json::parse_strict(stored.parameters, json::k_checked_json_limits);
      parsed && parsed->document.IsArray()) {
    for (const auto& p : parsed->document.GetArray()) {
      const auto part = part_of(json::string_member(p, "component").value_or(""));
      if (!part) continue;
      out.parameters.emplace(*part, static_cast<int>(json::int_member(p, "index").value_or(0)),
                             json::string_member(p, "name").value_or(""));
    }
  }
  auto parsed = json::parse_strict(stored.components, json::k_checked_json_limits);
  if (!parsed || !parsed->document.IsArray()) return out;
  for (const auto& component : parsed->document.GetArray()) {
    const std::string type = json::string_member(component, "type").value_or("");
    if (type != "BODY") out.body_only = false;
    if (type == "HEADER") out.header_format = json::string_member(component, "format").value_or("TEXT");
    if (type != "BUTTONS") continue;
    if (const auto* buttons = json::array_member(component, "buttons")) {
      for (const auto& button : buttons->GetArray())
        out.button_types.push_back(json::string_member(button, "type").value_or(""));
    }
  }
  return out;
}

std::string lower(std::string text) {
  std::ranges::transform(text, text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string where(const Key& key) {
  const auto& [part, button, name] = key;
  std::string out =
      std::string(template_send::to_string(part)) + (part == Part::button ? " " + std::to_string(button) : "");
  return out + " parameter {{" + name + "}}";
}

// The sub_type and parameter type a button of `type` is sent with; nullopt when it takes none.
std::optional<std::pair<const char*, const char*>> button_kind(std::string_view type) {
  if (type == "URL" || type == "OTP") return std::pair{"url", "text"};
  if (type == "QUICK_REPLY") return std::pair{"quick_reply", "payload"};
  if (type == "COPY_CODE") return std::pair{"copy_code", "coupon_code"};
  return std::nullopt;
}

// The longest a header's or the body's text parameter may be, for a template of `shape`.
std::size_t text_limit(Part part, const Shape& shape) {
  if (part == Part::header) return k_max_header_parameter;
  return shape.body_only ? k_max_body_only_parameter : k_max_body_parameter;
}

// The ways a template action's parameters can fail to fit `shape`: one phrase each.
std::vector<std::string> mismatches(const std::set<Key>& filled, const Shape& shape) {
  std::vector<std::string> out;
  for (const auto& key : shape.parameters) {
    if (!filled.contains(key)) out.push_back(where(key) + " is not filled");
  }
  const bool media =
      shape.header_format == "IMAGE" || shape.header_format == "VIDEO" || shape.header_format == "DOCUMENT";
  for (const auto& key : filled) {
    const auto& [part, button, name] = key;
    if (part == Part::header && template_send::is_media(name)) {
      if (lower(shape.header_format) != name)
        out.push_back("the header's " + name + " does not fit: the template's header is " +
                      (shape.header_format.empty() ? std::string("absent") : lower(shape.header_format)));
      continue;
    }
    if (!shape.parameters.contains(key)) out.push_back("the template has no " + where(key));
    if (part == Part::button &&
        (button >= static_cast<int>(shape.button_types.size()) || !button_kind(shape.button_types[button])))
      out.push_back("button " + std::to_string(button) + " takes no parameter");
  }
  if (media && std::ranges::none_of(filled, [](const Key& k) { return std::get<0>(k) == Part::header; }))
    out.push_back("the header's " + lower(shape.header_format) + " has no link");
  return out;
}

std::string named(const store::Template& stored) { return stored.name + " (" + stored.language + ")"; }

}  // namespace

std::optional<std::string> template_refusal(const store::Template& stored) {
  if (stored.status == store::TemplateStatus::approved) return std::nullopt;
  return "the template " + named(stored) + " is " + std::string(store::to_sql(stored.status)) +
         ": WhatsApp sends only approved templates";
}

std::expected<std::string, std::string> template_object(const template_send::TemplateSend& send,
                                                        const store::Template& stored) {
  const Shape shape = shape_of(stored);
  std::set<Key> filled;
  for (const auto& p : send.parameters) filled.emplace(p.part, p.button, p.name);
  if (auto wrong = mismatches(filled, shape); !wrong.empty())
    return std::unexpected("the template " + named(stored) + " does not fit: " + wrong.front());
  const bool by_name = stored.parameter_format == store::ParameterFormat::named;
  JsonOut out;
  out.begin_object().field("name", send.name).begin_object("language").field("code", send.language).end_object();
  out.begin_array("components");
  // Header and body: one component each, its parameters in the template's order ({{1}},
  // {{2}}, ...: positional parameters are matched by place).
  for (const Part part : {Part::header, Part::body}) {
    std::vector<const template_send::Parameter*> values;
    for (const auto& p : send.parameters)
      if (p.part == part) values.push_back(&p);
    if (values.empty()) continue;
    std::ranges::sort(values, [](const auto* a, const auto* b) {
      return std::pair(a->name.size(), a->name) < std::pair(b->name.size(), b->name);
    });
    out.begin_object().field("type", template_send::to_string(part)).begin_array("parameters");
    for (const auto* p : values) {
      if (template_send::is_media(p->name)) {
        out.begin_object().field("type", p->name).begin_object(p->name).field("link", p->value).end_object();
        out.end_object();
        continue;
      }
      const std::size_t limit = text_limit(part, shape);
      if (!utf8::is_valid(p->value) || p->value.empty() || utf8::code_points(p->value) > limit)
        return std::unexpected(where({part, 0, p->name}) + " must be 1 to " + std::to_string(limit) +
                               " characters of UTF-8");
      // The validator refuses these already; a row stored otherwise (or edited around it)
      // would only earn a 132018 from Graph.
      if (auto refused = template_send::text_parameter_problem(p->value))
        return std::unexpected(where({part, 0, p->name}) + " " + *refused +
                               ": WhatsApp refuses line breaks, tabs and more than 4 spaces in a row");
      out.begin_object().field("type", "text");
      if (by_name) out.field("parameter_name", p->name);
      out.field("text", p->value).end_object();
    }
    out.end_array().end_object();
  }
  for (const auto& p : send.parameters) {
    if (p.part != Part::button) continue;
    const auto [sub_type, type] = *button_kind(shape.button_types[p.button]);
    out.begin_object().field("type", "button").field("sub_type", sub_type).field("index", std::to_string(p.button));
    out.begin_array("parameters").begin_object().field("type", type).field(type, p.value).end_object();
    out.end_array().end_object();
  }
  out.end_array().end_object();
  return out.str();
}

std::vector<std::string> check_template_actions(const catalog::Catalog& catalog,
                                                const std::vector<store::Template>& stored) {
  std::vector<std::string> out;
  for (const auto& action : catalog.actions()) {
    if (!action.template_message) continue;
    const auto& message = *action.template_message;
    const auto say = [&](const std::string& what) { out.push_back(action.name + ": " + what); };
    const auto it = std::ranges::find_if(
        stored, [&](const store::Template& t) { return t.name == message.name && t.language == message.language; });
    if (it == stored.end()) {
      say("the template " + message.name + " (" + message.language +
          ") is not among the account's templates (dispatchctl templates list)");
      continue;
    }
    if (auto refused = template_refusal(*it)) say(*refused);
    const Shape shape = shape_of(*it);
    std::set<Key> filled;
    for (const auto& p : message.parameters) filled.emplace(p.part, p.button, p.name);
    for (const auto& wrong : mismatches(filled, shape)) say(wrong);
    for (const auto& p : message.parameters) {
      if (template_send::is_media(p.name) || p.part == Part::button) continue;
      const std::size_t limit = text_limit(p.part, shape);
      const catalog::Field* field = catalog.find_field(p.field);
      if (field == nullptr || field->schema.type != catalog::FieldType::string) continue;
      if (!field->schema.max_length || *field->schema.max_length > limit)
        say(where({p.part, p.button, p.name}) + " is filled from \"" + p.field + "\", which may be longer than " +
            std::to_string(limit) + " characters: give the field \"maxLength\" " + std::to_string(limit) + " or less");
    }
  }
  return out;
}

}  // namespace dispatchd::whatsapp
