#include "mcp/pinning.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "common/json_access.h"
#include "common/strict_json.h"

namespace dispatchd::mcp {
namespace {

using catalog::FieldType;
using rapidjson::Value;

const std::set<std::string_view> k_annotations = {"description", "title", "default", "examples", "$comment"};
const std::set<std::string_view> k_property_keywords = {
    "type",      "enum",      "const",   "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "pattern", "format"};
const std::set<std::string_view> k_top_keywords = {"type",    "properties", "required", "additionalProperties",
                                                   "$schema", "$id"};

std::string_view type_name(FieldType type) {
  switch (type) {
    case FieldType::string: return "string";
    case FieldType::integer: return "integer";
    case FieldType::number: return "number";
    case FieldType::boolean: return "boolean";
    // Never an mcp action's field (the catalog keeps them to a reply's interactive_field).
    case FieldType::buttons: return "array";
    case FieldType::list: return "object";
  }
  return "string";
}

// Whether a server's "type" (a name or an array of names) admits the field's type.
bool type_fits(const Value& type, FieldType field) {
  const auto fits = [&](std::string_view name) {
    return name == type_name(field) || (field == FieldType::integer && name == "number");
  };
  if (type.IsString()) return fits(json::string_of(type));
  if (!type.IsArray()) return false;
  return std::any_of(type.Begin(), type.End(),
                     [&](const Value& t) { return t.IsString() && fits(json::string_of(t)); });
}

std::vector<std::string> allowed_values(const catalog::FieldSchema& schema) {
  if (schema.const_value) return {*schema.const_value};
  return schema.enum_values;
}

class Checker {
 public:
  explicit Checker(std::vector<std::string>& problems) : m_problems(problems) {}

  void property(const PinnedArgument& arg, const Value& server) {
    m_where = "field `" + arg.field + "` (argument `" + arg.argument + "`)";
    if (!server.IsObject()) return problem("the server's schema for it is not an object");
    const auto& schema = arg.schema;
    for (const auto& member : server.GetObject()) {
      const std::string_view key = json::string_of(member.name);
      if (k_annotations.contains(key) || k_property_keywords.contains(key)) continue;
      problem("the server's schema has `" + std::string(key) + "`, which the check does not follow");
    }
    if (const Value* type = json::member(server, "type"); type && !type_fits(*type, schema.type))
      problem("the server's type is " + json::to_string(*type) + ", the catalog's " +
              std::string(type_name(schema.type)));
    values(schema, server);
    lower("minimum", schema.minimum, server, false);
    lower("exclusiveMinimum", schema.minimum, server, true);
    upper("maximum", schema.maximum, server, false);
    upper("exclusiveMaximum", schema.maximum, server, true);
    length("minLength", schema.min_length, server, true);
    length("maxLength", schema.max_length, server, false);
    if (const Value* pattern = json::member(server, "pattern")) {
      if (!pattern->IsString() || !schema.pattern || *schema.pattern != json::string_of(pattern))
        problem("the server requires the pattern " + json::to_string(*pattern) +
                (schema.pattern ? ", the catalog another" : ", the catalog none"));
    }
    if (const Value* format = json::member(server, "format")) {
      if (!(format->IsString() && json::string_of(format) == "date" && schema.date))
        problem("the server requires the format " + json::to_string(*format) + ", which the catalog's field does not");
    }
  }

  void problem(const std::string& what) { m_problems.push_back(m_where + ": " + what); }
  void set_where(std::string where) { m_where = std::move(where); }

 private:
  void values(const catalog::FieldSchema& schema, const Value& server) {
    const Value* server_enum = json::member(server, "enum");
    const Value* server_const = json::member(server, "const");
    if (!server_enum && !server_const) return;
    std::set<std::string> accepted;
    if (server_enum && server_enum->IsArray())
      for (const Value& v : server_enum->GetArray()) accepted.insert(json::to_string(v));
    if (server_enum && !server_enum->IsArray()) return problem("the server's enum is not an array");
    const auto ours = allowed_values(schema);
    if (ours.empty()) return problem("the server allows only some values, the catalog any");
    for (const auto& value : ours) {
      if (server_enum && !accepted.contains(value)) problem("the server's enum lacks " + value);
      if (server_const && json::to_string(*server_const) != value)
        problem("the server's const is " + json::to_string(*server_const) + ", the catalog allows " + value);
    }
  }

  // The server's lower bound `key` against the field's minimum: the field's must be at
  // least as high (strictly higher for an exclusive bound).
  void lower(const char* key, const std::optional<double>& ours, const Value& server, bool exclusive) {
    const auto bound = json::number_member(server, key);
    if (!bound && !json::member(server, key)) return;
    if (!bound) return problem(std::string("the server's ") + key + " is not a number");
    if (!ours || *ours < *bound || (exclusive && *ours == *bound))
      problem(std::string("the server's ") + key + " is " + number(*bound) + ", the catalog's minimum " +
              (ours ? number(*ours) : "none"));
  }
  void upper(const char* key, const std::optional<double>& ours, const Value& server, bool exclusive) {
    const auto bound = json::number_member(server, key);
    if (!bound && !json::member(server, key)) return;
    if (!bound) return problem(std::string("the server's ") + key + " is not a number");
    if (!ours || *ours > *bound || (exclusive && *ours == *bound))
      problem(std::string("the server's ") + key + " is " + number(*bound) + ", the catalog's maximum " +
              (ours ? number(*ours) : "none"));
  }
  void length(const char* key, const std::optional<std::size_t>& ours, const Value& server, bool at_least) {
    const auto bound = json::int_member(server, key);
    if (!bound && !json::member(server, key)) return;
    if (!bound || *bound < 0) return problem(std::string("the server's ") + key + " is not a count");
    const auto b = static_cast<std::size_t>(*bound);
    const bool tight_enough = ours && (at_least ? *ours >= b : *ours <= b);
    if (!tight_enough)
      problem(std::string("the server's ") + key + " is " + std::to_string(b) + ", the catalog's " +
              (ours ? std::to_string(*ours) : std::string("none")));
  }
  static std::string number(double d) {
    if (std::floor(d) == d && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
    return std::to_string(d);
  }

  std::vector<std::string>& m_problems;
  std::string m_where;
};

}  // namespace

std::vector<std::string> pin_problems(const std::vector<PinnedArgument>& arguments,
                                      std::string_view input_schema_json) {
  std::vector<std::string> problems;
  auto parsed = json::parse_strict(input_schema_json, json::ParseLimits{.max_depth = 64});
  if (!parsed) return {"the server's inputSchema is not JSON: " + parsed.error().message};
  const Value& root = parsed->document;
  if (!root.IsObject()) return {"the server's inputSchema is not an object"};
  Checker check(problems);
  check.set_where("the tool's inputSchema");
  for (const auto& member : root.GetObject()) {
    const std::string_view key = json::string_of(member.name);
    if (!k_top_keywords.contains(key) && !k_annotations.contains(key))
      check.problem("it has `" + std::string(key) + "`, which the check does not follow");
  }
  if (json::string_member(root, "type") != "object") check.problem("its type is not \"object\"");
  const Value* properties = json::member(root, "properties");
  if (properties && !properties->IsObject()) check.problem("its properties are not an object");
  const Value* additional = json::member(root, "additionalProperties");
  const bool closed = additional && additional->IsBool() && !additional->GetBool();
  if (additional && !additional->IsBool())
    check.problem("its additionalProperties is a schema, which the check does not follow");
  if (const Value* required = json::member(root, "required")) {
    if (!required->IsArray()) {
      check.problem("its required is not an array");
    } else {
      for (const Value& name : required->GetArray()) {
        const std::string_view wanted = json::string_of(name);
        const auto arg = std::find_if(arguments.begin(), arguments.end(),
                                      [&](const PinnedArgument& a) { return a.argument == wanted; });
        if (arg == arguments.end())
          check.problem("it requires `" + std::string(wanted) + "`, which no catalog field gives");
        else if (!arg->always_sent)
          check.problem("it requires `" + std::string(wanted) + "`, which field `" + arg->field +
                        "` may leave out (the action does not require it)");
      }
    }
  }
  for (const auto& arg : arguments) {
    const Value* server = properties && properties->IsObject() ? json::member(*properties, arg.argument) : nullptr;
    if (!server) {
      if (closed) {
        check.set_where("field `" + arg.field + "` (argument `" + arg.argument + "`)");
        check.problem("the server's schema has no such property and allows no others");
      }
      continue;
    }
    check.property(arg, *server);
  }
  return problems;
}

std::vector<PinnedArgument> pinned_arguments(const catalog::Catalog& catalog, const catalog::Action& action) {
  std::vector<PinnedArgument> out;
  if (!action.mcp) return out;
  for (const auto& field : catalog.fields()) {
    if (!action.uses(field.name)) continue;
    out.push_back({field.name, action.mcp->argument_of(field.name), field.schema, action.needs(field.name)});
  }
  return out;
}

std::string_view to_string(PinState state) {
  switch (state) {
    case PinState::pinned: return "pinned";
    case PinState::unknown_server: return "unknown_server";
    case PinState::server_down: return "server_down";
    case PinState::missing_tool: return "missing_tool";
    case PinState::incompatible: return "incompatible";
  }
  return "?";
}

std::string describe(const ActionPin& pin) {
  std::string out = "action `" + pin.action + "` (server `" + pin.server + "`, tool `" + pin.tool + "`): ";
  switch (pin.state) {
    case PinState::pinned: return out + "pinned";
    case PinState::unknown_server: return out + "no server of that name in mcp.servers";
    case PinState::server_down: return out + "the server has not listed its tools";
    case PinState::missing_tool: return out + "the server does not list the tool";
    case PinState::incompatible: break;
  }
  out += "the tool's inputSchema is incompatible: ";
  for (std::size_t i = 0; i < pin.problems.size(); ++i) out += (i ? "; " : "") + pin.problems[i];
  return out;
}

std::vector<ActionPin> pin_actions(const catalog::Catalog& catalog, const ServerTools& servers) {
  std::vector<ActionPin> out;
  for (const auto& action : catalog.actions()) {
    if (!action.mcp) continue;
    ActionPin pin{action.name, action.mcp->server, action.mcp->tool, PinState::pinned, {}};
    const auto server = servers.find(action.mcp->server);
    if (server == servers.end()) {
      pin.state = PinState::unknown_server;
    } else if (!server->second) {
      pin.state = PinState::server_down;
    } else {
      const auto& tools = *server->second;
      const auto tool = std::find_if(tools.begin(), tools.end(), [&](const Tool& t) { return t.name == pin.tool; });
      if (tool == tools.end()) {
        pin.state = PinState::missing_tool;
      } else {
        pin.problems = pin_problems(pinned_arguments(catalog, action), tool->input_schema);
        if (!pin.problems.empty()) pin.state = PinState::incompatible;
      }
    }
    out.push_back(std::move(pin));
  }
  return out;
}

}  // namespace dispatchd::mcp
