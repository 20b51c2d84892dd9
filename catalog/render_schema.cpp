#include <string>
#include <vector>

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "catalog/render.h"

namespace dispatchd::catalog {
namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void write_string(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

// Enum and const values are stored as canonical JSON text; they go out verbatim.
void write_raw(Writer& w, const std::string& json) { w.RawValue(json.c_str(), json.size(), rapidjson::kStringType); }

void write_names(Writer& w, const std::vector<std::string>& names) {
  w.StartArray();
  for (const auto& name : names) write_string(w, name);
  w.EndArray();
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

void write_field(Writer& w, const Catalog& catalog, const Field& field, Flavor flavor) {
  const FieldSchema& s = field.schema;
  const bool nullable = !catalog.required_by_all(field.name);
  w.StartObject();
  w.Key("type");
  if (nullable) {
    w.StartArray();
    w.String(to_string(s.type));
    w.String("null");
    w.EndArray();
  } else {
    w.String(to_string(s.type));
  }
  const bool openai = flavor == Flavor::openai;
  const std::string description = described(s, openai, false, false, false);
  if (!description.empty()) {
    w.Key("description");
    write_string(w, description);
  }
  std::vector<std::string> allowed = s.enum_values;
  if (s.const_value && openai) allowed = {*s.const_value};
  if (!allowed.empty()) {
    w.Key("enum");
    w.StartArray();
    for (const auto& value : allowed) write_raw(w, value);
    if (nullable) w.Null();
    w.EndArray();
  }
  if (s.const_value && !openai) {
    w.Key("const");
    write_raw(w, *s.const_value);
  }
  if (!openai && s.min_length) {
    w.Key("minLength");
    w.Uint64(*s.min_length);
  }
  if (!openai && s.max_length) {
    w.Key("maxLength");
    w.Uint64(*s.max_length);
  }
  if (s.pattern) {
    w.Key("pattern");
    write_string(w, *s.pattern);
  }
  if (s.date) {
    w.Key("format");
    w.String("date");
  }
  if (s.minimum) {
    w.Key("minimum");
    w.Double(*s.minimum);
  }
  if (s.maximum) {
    w.Key("maximum");
    w.Double(*s.maximum);
  }
  w.EndObject();
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
void write_action_property(Writer& w, const Catalog& catalog, const char* type) {
  write_string(w, catalog.action_field());
  w.StartObject();
  w.Key("type");
  w.String(type);
  w.Key("description");
  w.String("The one action to take.");
  w.Key("enum");
  write_names(w, action_names(catalog));
  w.EndObject();
}

void write_object_schema(Writer& w, const Catalog& catalog, Flavor flavor) {
  w.StartObject();
  w.Key("type");
  w.String("object");
  w.Key("properties");
  w.StartObject();
  write_action_property(w, catalog, "string");
  for (const auto& field : catalog.fields()) {
    write_string(w, field.name);
    write_field(w, catalog, field, flavor);
  }
  w.EndObject();
  w.Key("required");
  write_names(w, property_names(catalog));
  w.Key("additionalProperties");
  w.Bool(false);
  w.EndObject();
}

// Runs `body` on a pretty writer and returns the document with a final newline.
template <typename Body>
std::string pretty(Body&& body) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.SetIndent(' ', 2);
  body(w);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

void write_gemini_field(Writer& w, const Catalog& catalog, const Field& field) {
  const FieldSchema& s = field.schema;
  const bool numeric = s.type == FieldType::integer || s.type == FieldType::number;
  const bool string_enum = s.type == FieldType::string && (!s.enum_values.empty() || s.const_value);
  w.StartObject();
  w.Key("type");
  const char* types[] = {"STRING", "INTEGER", "NUMBER", "BOOLEAN"};
  w.String(types[static_cast<int>(s.type)]);
  if (!catalog.required_by_all(field.name)) {
    w.Key("nullable");
    w.Bool(true);
  }
  std::string description = described(s, true, true, false, true);
  if (!string_enum && !s.enum_values.empty()) {
    std::string list;
    for (const auto& v : s.enum_values) list += (list.empty() ? "" : ", ") + v;
    description += (description.empty() ? "" : " ") + std::string("One of: ") + list + ".";
  }
  if (!string_enum && s.const_value)
    description += (description.empty() ? "" : " ") + ("Always " + *s.const_value + ".");
  if (!description.empty()) {
    w.Key("description");
    write_string(w, description);
  }
  if (string_enum) {
    w.Key("enum");
    w.StartArray();
    if (s.const_value) write_raw(w, *s.const_value);
    for (const auto& v : s.enum_values) write_raw(w, v);
    w.EndArray();
  }
  if (numeric && s.minimum) {
    w.Key("minimum");
    w.Double(*s.minimum);
  }
  if (numeric && s.maximum) {
    w.Key("maximum");
    w.Double(*s.maximum);
  }
  w.EndObject();
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
  return pretty([&](Writer& w) { write_object_schema(w, catalog, Flavor::standard); });
}

std::string render_openai_response_format(const Catalog& catalog) {
  return pretty([&](Writer& w) {
    w.StartObject();
    w.Key("type");
    w.String("json_schema");
    w.Key("json_schema");
    w.StartObject();
    w.Key("name");
    w.String("dispatchd_action");
    w.Key("strict");
    w.Bool(true);
    w.Key("schema");
    write_object_schema(w, catalog, Flavor::openai);
    w.EndObject();
    w.EndObject();
  });
}

std::string render_gemini_schema(const Catalog& catalog) {
  return pretty([&](Writer& w) {
    w.StartObject();
    w.Key("type");
    w.String("OBJECT");
    w.Key("properties");
    w.StartObject();
    write_action_property(w, catalog, "STRING");
    for (const auto& field : catalog.fields()) {
      write_string(w, field.name);
      write_gemini_field(w, catalog, field);
    }
    w.EndObject();
    w.Key("required");
    write_names(w, property_names(catalog));
    w.Key("propertyOrdering");
    write_names(w, property_names(catalog));
    w.EndObject();
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
