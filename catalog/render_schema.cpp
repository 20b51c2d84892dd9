#include <string>
#include <vector>

#include "catalog/render.h"
#include "common/interactive.h"
#include "common/json_out.h"

namespace dispatchd::catalog {
namespace {

// Schemas are shown to people (dispatchctl catalog schema) and minified for providers.
using Out = PrettyJsonOut;

void write_names(Out& out, std::string_view key, const std::vector<std::string>& names) {
  out.begin_array(key);
  for (const auto& name : names) out.value(name);
  out.end_array();
}

// Constraints a dialect cannot express, as a sentence appended to the description.
std::string described(const FieldSchema& s, bool lengths, bool pattern, bool bounds, bool date) {
  std::string out = s.description;
  const auto add = [&](const std::string& sentence) { out += (out.empty() ? "" : " ") + sentence; };
  if (lengths && s.min_length) add("At least " + std::to_string(*s.min_length) + " characters.");
  if (lengths && s.max_length) add("At most " + std::to_string(*s.max_length) + " characters.");
  if (pattern && s.pattern) add("Must match the regular expression " + *s.pattern + ".");
  if (bounds && s.minimum) add("Minimum " + std::to_string(*s.minimum) + ".");
  if (bounds && s.maximum) add("Maximum " + std::to_string(*s.maximum) + ".");
  if (date && s.date) add("A calendar date written YYYY-MM-DD.");
  return out;
}

enum class Flavor { standard, openai };

// A string member of an interactive item: its length limit as a keyword where the dialect
// enforces it (the validator checks it whatever the provider did).
void write_text(Out& out, std::string_view key, std::size_t max, bool limits, bool nullable = false) {
  out.begin_object(key);
  if (nullable)
    out.begin_array("type").value("string").value("null").end_array();
  else
    out.field("type", "string");
  if (limits) out.field("minLength", nullable ? 0 : 1).field("maxLength", max);
  out.end_object();
}

// An object of string members, all required (strict modes want every property listed).
template <typename Members>
void write_item(Out& out, std::initializer_list<std::string_view> names, Members&& members) {
  out.field("type", "object").begin_object("properties");
  members();
  out.end_object();
  write_names(out, "required", std::vector<std::string>(names.begin(), names.end()));
  out.field("additionalProperties", false);
}

void write_items_bounds(Out& out, std::size_t max, bool limits) {
  if (limits) out.field("minItems", 1).field("maxItems", max);
}

// The value of a buttons or list field (common/interactive.h): the items' shape always, the
// limits as keywords only for the standard flavor.
void write_choices(Out& out, FieldType type, bool limits) {
  using namespace interactive;
  if (type == FieldType::buttons) {
    out.begin_object("items");
    write_item(out, {"id", "title"}, [&] {
      write_text(out, "id", k_max_button_id, limits);
      write_text(out, "title", k_max_button_title, limits);
    });
    out.end_object();
    return write_items_bounds(out, k_max_buttons, limits);
  }
  out.begin_object("properties");
  write_text(out, "button", k_max_list_button, limits);
  out.begin_object("sections").field("type", "array").begin_object("items");
  write_item(out, {"title", "rows"}, [&] {
    write_text(out, "title", k_max_section_title, limits);
    out.begin_object("rows").field("type", "array").begin_object("items");
    write_item(out, {"id", "title", "description"}, [&] {
      write_text(out, "id", k_max_row_id, limits);
      write_text(out, "title", k_max_row_title, limits);
      write_text(out, "description", k_max_row_description, limits, true);
    });
    out.end_object();
    write_items_bounds(out, k_max_rows, limits);
    out.end_object();
  });
  out.end_object();
  write_items_bounds(out, k_max_sections, limits);
  out.end_object().end_object();
  write_names(out, "required", {"button", "sections"});
  out.field("additionalProperties", false);
}

const char* json_type(FieldType type) {
  return type == FieldType::buttons ? "array" : type == FieldType::list ? "object" : to_string(type);
}

// Enum and const values are stored as canonical JSON text (catalog.h): they go out verbatim.
void write_field(Out& out, const Catalog& catalog, const Field& field, Flavor flavor) {
  const FieldSchema& s = field.schema;
  const bool nullable = !catalog.required_by_all(field.name);
  out.begin_object(field.name);
  if (nullable) {
    out.begin_array("type").value(json_type(s.type)).value("null").end_array();
  } else {
    out.field("type", json_type(s.type));
  }
  const bool openai = flavor == Flavor::openai;
  std::string description = described(s, openai, false, false, false);
  if (const std::string rules = choices_rules(s.type); openai && !rules.empty())
    description += (description.empty() ? "" : " ") + rules + ".";
  if (!description.empty()) out.field("description", description);
  if (s.type == FieldType::buttons || s.type == FieldType::list) {
    write_choices(out, s.type, !openai);
    out.end_object();
    return;
  }
  std::vector<std::string> allowed = s.enum_values;
  if (s.const_value && openai) allowed = {*s.const_value};
  if (!allowed.empty()) {
    out.begin_array("enum");
    for (const auto& value : allowed) out.raw(value);
    if (nullable) out.value(nullptr);
    out.end_array();
  }
  if (s.const_value && !openai) out.raw("const", *s.const_value);
  if (!openai) out.field_if_set("minLength", s.min_length).field_if_set("maxLength", s.max_length);
  out.field_if_set("pattern", s.pattern);
  if (s.date) out.field("format", "date");
  out.field_if_set("minimum", s.minimum).field_if_set("maximum", s.maximum);
  out.end_object();
}

std::vector<std::string> action_names(const Catalog& catalog) {
  std::vector<std::string> names;
  for (const auto& action : catalog.actions()) names.push_back(action.name);
  return names;
}

std::vector<std::string> property_names(const Catalog& catalog) {
  std::vector<std::string> names{catalog.action_field()};
  for (const auto& field : catalog.fields()) names.push_back(field.name);
  return names;
}

// The action field: a string enum of the action names, in catalog order.
void write_action_property(Out& out, const Catalog& catalog, const char* type) {
  out.begin_object(catalog.action_field()).field("type", type).field("description", "The one action to take.");
  write_names(out, "enum", action_names(catalog));
  out.end_object();
}

void write_object_schema(Out& out, const Catalog& catalog, Flavor flavor) {
  out.field("type", "object").begin_object("properties");
  write_action_property(out, catalog, "string");
  for (const auto& field : catalog.fields()) write_field(out, catalog, field, flavor);
  out.end_object();
  write_names(out, "required", property_names(catalog));
  out.field("additionalProperties", false);
}

// Runs `body` inside the document's outermost object and returns the document with a
// final newline.
template <typename Body>
std::string pretty_object(Body&& body) {
  Out out;
  out.begin_object();
  body(out);
  return out.end_object().str() + "\n";
}

// Gemini's dialect for an interactive item: upper-case types, `nullable`, limits in words
// (the field's description carries choices_rules).
void write_gemini_item(Out& out, std::initializer_list<std::string_view> names) {
  out.field("type", "OBJECT").begin_object("properties");
  for (const auto name : names) {
    out.begin_object(name).field("type", "STRING");
    if (name == "description") out.field("nullable", true);
    out.end_object();
  }
  out.end_object();
  write_names(out, "required", std::vector<std::string>(names.begin(), names.end()));
}

void write_gemini_choices(Out& out, const Catalog& catalog, const Field& field) {
  const bool buttons = field.schema.type == FieldType::buttons;
  out.begin_object(field.name).field("type", buttons ? "ARRAY" : "OBJECT");
  if (!catalog.required_by_all(field.name)) out.field("nullable", true);
  std::string description = field.schema.description;
  description += (description.empty() ? "" : " ") + choices_rules(field.schema.type) + ".";
  out.field("description", description);
  if (buttons) {
    out.begin_object("items");
    write_gemini_item(out, {"id", "title"});
    out.end_object().end_object();
    return;
  }
  out.begin_object("properties").begin_object("button").field("type", "STRING").end_object();
  out.begin_object("sections").field("type", "ARRAY").begin_object("items").field("type", "OBJECT");
  out.begin_object("properties").begin_object("title").field("type", "STRING").end_object();
  out.begin_object("rows").field("type", "ARRAY").begin_object("items");
  write_gemini_item(out, {"id", "title", "description"});
  out.end_object().end_object().end_object();
  write_names(out, "required", {"title", "rows"});
  out.end_object().end_object().end_object();
  write_names(out, "required", {"button", "sections"});
  out.end_object();
}

void write_gemini_field(Out& out, const Catalog& catalog, const Field& field) {
  const FieldSchema& s = field.schema;
  if (s.type == FieldType::buttons || s.type == FieldType::list) return write_gemini_choices(out, catalog, field);
  const bool numeric = s.type == FieldType::integer || s.type == FieldType::number;
  const bool string_enum = s.type == FieldType::string && (!s.enum_values.empty() || s.const_value);
  const char* types[] = {"STRING", "INTEGER", "NUMBER", "BOOLEAN"};
  out.begin_object(field.name).field("type", types[static_cast<int>(s.type)]);
  if (!catalog.required_by_all(field.name)) out.field("nullable", true);
  std::string description = described(s, true, true, false, true);
  if (!string_enum && !s.enum_values.empty()) {
    std::string list;
    for (const auto& v : s.enum_values) list += (list.empty() ? "" : ", ") + v;
    description += (description.empty() ? "" : " ") + std::string("One of: ") + list + ".";
  }
  if (!string_enum && s.const_value)
    description += (description.empty() ? "" : " ") + ("Always " + *s.const_value + ".");
  if (!description.empty()) out.field("description", description);
  if (string_enum) {
    out.begin_array("enum");
    if (s.const_value) out.raw(*s.const_value);
    for (const auto& v : s.enum_values) out.raw(v);
    out.end_array();
  }
  if (numeric) out.field_if_set("minimum", s.minimum).field_if_set("maximum", s.maximum);
  out.end_object();
}

}  // namespace

std::optional<Dialect> parse_dialect(std::string_view name) {
  if (name == "jsonschema") return Dialect::jsonschema;
  if (name == "openai") return Dialect::openai;
  if (name == "gemini") return Dialect::gemini;
  if (name == "prompt") return Dialect::prompt;
  return std::nullopt;
}

std::string render_json_schema(const Catalog& catalog) {
  return pretty_object([&](Out& out) { write_object_schema(out, catalog, Flavor::standard); });
}

std::string render_openai_response_format(const Catalog& catalog) {
  return pretty_object([&](Out& out) {
    out.field("type", "json_schema").begin_object("json_schema");
    out.field("name", "dispatchd_action").field("strict", true).begin_object("schema");
    write_object_schema(out, catalog, Flavor::openai);
    out.end_object().end_object();
  });
}

std::string render_gemini_schema(const Catalog& catalog) {
  return pretty_object([&](Out& out) {
    out.field("type", "OBJECT").begin_object("properties");
    write_action_property(out, catalog, "STRING");
    for (const auto& field : catalog.fields()) write_gemini_field(out, catalog, field);
    out.end_object();
    write_names(out, "required", property_names(catalog));
    write_names(out, "propertyOrdering", property_names(catalog));
  });
}

std::string render(const Catalog& catalog, Dialect dialect) {
  switch (dialect) {
    case Dialect::jsonschema: return render_json_schema(catalog);
    case Dialect::openai: return render_openai_response_format(catalog);
    case Dialect::gemini: return render_gemini_schema(catalog);
    case Dialect::prompt: return render_prompt(catalog);
  }
  return {};
}

}  // namespace dispatchd::catalog
