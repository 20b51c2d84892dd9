#include <string>

#include "catalog/render.h"
#include "common/interactive.h"

namespace dispatchd::catalog {
namespace {

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string joined(const std::vector<std::string>& values, std::string_view separator) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : std::string(separator)) + v;
  return out;
}

std::string number(double value) {
  std::string s = std::to_string(value);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

// "string", or the allowed values when the field has an enum or const.
std::string value_shape(const Catalog& catalog, const Field& field) {
  const FieldSchema& s = field.schema;
  std::string shape = s.const_value                    ? *s.const_value
                      : !s.enum_values.empty()         ? joined(s.enum_values, "|")
                      : !choices_shape(s.type).empty() ? choices_shape(s.type)
                                                       : to_string(s.type);
  if (!catalog.required_by_all(field.name)) shape += "|null";
  return shape;
}

std::string constraints(const FieldSchema& s) {
  std::vector<std::string> parts;
  if (s.min_length == 1)
    parts.push_back("not empty");
  else if (s.min_length)
    parts.push_back("at least " + std::to_string(*s.min_length) + " characters");
  if (s.max_length) parts.push_back("at most " + std::to_string(*s.max_length) + " characters");
  if (s.pattern) parts.push_back("matches the regular expression " + *s.pattern);
  if (s.date) parts.push_back("a real calendar date written YYYY-MM-DD");
  if (s.minimum) parts.push_back("at least " + number(*s.minimum));
  if (s.maximum) parts.push_back("at most " + number(*s.maximum));
  if (s.grounding != Grounding::none) parts.push_back("copied exactly as it appears in the customer's message");
  if (const std::string rules = choices_rules(s.type); !rules.empty()) parts.push_back(rules);
  return joined(parts, "; ");
}

void append_fields(std::string& out, const Catalog& catalog, bool schema_enforced) {
  out += "Fields of the object:\n";
  std::vector<std::string> names;
  for (const auto& action : catalog.actions()) names.push_back(quoted(action.name));
  out += "- " + quoted(catalog.action_field()) + ": exactly one of " + joined(names, ", ") + ".\n";
  for (const auto& field : catalog.fields()) {
    const FieldSchema& s = field.schema;
    out += "- " + quoted(field.name) + ": ";
    if (!s.enum_values.empty())
      out += "exactly one of " + joined(s.enum_values, ", ") + ". ";
    else if (s.const_value)
      out += "always " + *s.const_value + ". ";
    else if (!schema_enforced)
      out += (choices_shape(s.type).empty() ? std::string(to_string(s.type)) : choices_shape(s.type)) + ". ";
    if (!s.description.empty()) out += s.description + " ";
    if (!schema_enforced) {
      const std::string rules = constraints(s);
      if (!rules.empty()) out += "Rules: " + rules + ".";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
}

void append_actions(std::string& out, const Catalog& catalog) {
  out += "\nActions:\n";
  for (const auto& action : catalog.actions()) {
    out += "- " + quoted(action.name) + ": " + action.description;
    std::vector<std::string> uses;
    for (const auto& field : catalog.fields()) {
      if (action.needs(field.name)) uses.push_back(quoted(field.name));
    }
    if (!uses.empty()) out += " Requires " + joined(uses, ", ") + ".";
    std::vector<std::string> unused;
    for (const auto& field : catalog.fields()) {
      if (!action.uses(field.name)) unused.push_back(quoted(field.name));
    }
    if (!unused.empty()) out += " Set " + joined(unused, ", ") + " to null.";
    if (action.policy.recipient_field) {
      out += " " + quoted(*action.policy.recipient_field) +
             " must be the customer who wrote this conversation, never anyone else.";
    }
    if (action.policy.requires_approval) out += " A person approves it before it runs.";
    if (action.template_message)
      out += " Sends the approved message template " + quoted(action.template_message->name) +
             ": it reaches the customer even when the customer last wrote more than 24 hours ago.";
    out += "\n";
  }
}

void append_examples(std::string& out, const Catalog& catalog) {
  bool any = false;
  for (const auto& action : catalog.actions()) {
    for (const auto& example : action.examples) {
      if (!any) out += "\nExamples:\n";
      any = true;
      out += example.valid ? "Correct" : "Incorrect";
      if (!example.sender.empty()) out += " (the customer is " + example.sender + ")";
      out += ": " + example.reply + "\n  Why: " + example.reason + "\n";
    }
  }
}

}  // namespace

std::string choices_shape(FieldType type) {
  if (type == FieldType::buttons) return R"([{"id": string, "title": string}])";
  if (type == FieldType::list)
    return R"({"button": string, "sections": [{"title": string, "rows": [{"id": string, "title": string, )"
           R"("description": string|null}]}]})";
  return {};
}

std::string choices_rules(FieldType type) {
  using namespace interactive;
  const auto n = [](std::size_t v) { return std::to_string(v); };
  if (type == FieldType::buttons)
    return "reply buttons: 1 to " + n(k_max_buttons) + " buttons; each title 1 to " + n(k_max_button_title) +
           " characters, each id 1 to " + n(k_max_button_id) + " characters; no two ids or titles alike; the text " +
           "sent with them at most " + n(k_max_buttons_body) + " characters";
  if (type == FieldType::list)
    return "a list: the button label 1 to " + n(k_max_list_button) + " characters; 1 to " + n(k_max_sections) +
           " sections, each title 1 to " + n(k_max_section_title) + " characters; 1 to " + n(k_max_rows) +
           " rows in all sections together; each row title 1 to " + n(k_max_row_title) + " characters, id 1 to " +
           n(k_max_row_id) + ", description at most " + n(k_max_row_description) + " or null; no two ids alike";
  return {};
}

std::string render_contract_line(const Catalog& catalog) {
  std::vector<std::string> names;
  for (const auto& action : catalog.actions()) names.push_back(quoted(action.name));
  std::string line = "{" + quoted(catalog.action_field()) + ": " + joined(names, "|");
  for (const auto& field : catalog.fields()) line += ", " + quoted(field.name) + ": " + value_shape(catalog, field);
  return line + "}";
}

std::string render_prompt(const Catalog& catalog, const PromptOptions& options) {
  std::string out;
  if (!catalog.description().empty()) out += catalog.description() + "\n\n";
  out += "Reply with exactly ONE JSON object and nothing else: no code fences, no text before or after it.\n";
  if (!options.schema_enforced) {
    out += "Format: " + render_contract_line(catalog) + "\n";
    out += "No fields outside it, none omitted.\n";
  }
  out += "Write every value exactly as listed: no synonyms, no other spelling, no other case.\n\n";
  append_fields(out, catalog, options.schema_enforced);
  append_actions(out, catalog);
  append_examples(out, catalog);
  return out;
}

}  // namespace dispatchd::catalog
