#include "catalog/internal/reader.h"

#include "catalog/render.h"

#include <algorithm>
#include <regex>
#include <set>

#include "common/json_access.h"
#include "common/strict_json.h"
#include "common/text.h"

namespace dispatchd::catalog {
namespace {

std::string child(const std::string& at, std::string_view token) { return at + "/" + text::pointer_token(token); }

std::string child(const std::string& at, std::size_t index) { return at + "/" + std::to_string(index); }

bool is_identifier(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

std::optional<FieldType> parse_type(std::string_view name) {
  if (name == "string") return FieldType::string;
  if (name == "integer") return FieldType::integer;
  if (name == "number") return FieldType::number;
  if (name == "boolean") return FieldType::boolean;
  if (name == "buttons") return FieldType::buttons;
  if (name == "list") return FieldType::list;
  return std::nullopt;
}

std::optional<ActionKind> parse_kind(std::string_view name) {
  if (name == "reply") return ActionKind::reply;
  if (name == "escalate") return ActionKind::escalate;
  if (name == "ignore") return ActionKind::ignore;
  if (name == "http") return ActionKind::http;
  if (name == "mcp") return ActionKind::mcp;
  if (name == "template") return ActionKind::template_message;
  return std::nullopt;
}

// The {name} placeholders of a URL template, in order.
std::vector<std::string> placeholders(std::string_view url) {
  std::vector<std::string> names;
  for (std::size_t open = url.find('{'); open != std::string_view::npos; open = url.find('{', open + 1)) {
    const std::size_t close = url.find('}', open);
    if (close == std::string_view::npos) break;
    names.emplace_back(url.substr(open + 1, close - open - 1));
  }
  return names;
}

}  // namespace

void CatalogReader::problem(const std::string& at, std::string message) {
  m_problems.push_back({m_origin, at, std::move(message)});
}

void CatalogReader::check_keys(const Value& object, const std::string& at,
                               std::initializer_list<std::string_view> allowed) {
  for (const auto& member : object.GetObject()) {
    const std::string_view key = json::string_of(member.name);
    if (key == "$comment") continue;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const auto name : allowed) list += (list.empty() ? "" : ", ") + std::string(name);
      problem(child(at, key), "unknown key " + text::quote(key) + " (allowed: " + list + ")");
    }
  }
}

std::expected<Catalog, std::vector<Problem>> CatalogReader::read(std::string_view text) {
  m_catalog.m_origin = m_origin;
  auto parsed = json::parse_strict(text, json::ParseLimits{.max_depth = 16});
  if (!parsed) {
    problem("", "not valid JSON: " + parsed.error().message + " at byte " + std::to_string(parsed.error().offset));
    return std::unexpected(std::move(m_problems));
  }
  const Value& root = parsed->document;
  if (!root.IsObject()) {
    problem("", "the catalog must be a JSON object");
  } else {
    read_root(root);
  }
  if (!m_problems.empty()) return std::unexpected(std::move(m_problems));
  // Derived once here so that validating a reply builds none of it.
  for (auto& action : m_catalog.m_actions) {
    m_catalog.m_action_names.push_back(action.name);
    for (const auto& field : m_catalog.m_fields) {
      action.field_uses.push_back(action.needs(field.name)  ? FieldUse::required
                                  : action.uses(field.name) ? FieldUse::optional
                                                            : FieldUse::unused);
    }
  }
  m_catalog.m_action_pointer = "/" + text::pointer_token(m_catalog.m_action_field);
  m_catalog.m_contract_line = render_contract_line(m_catalog);
  return std::move(m_catalog);
}

void CatalogReader::read_root(const Value& root) {
  check_keys(root, "", {"name", "description", "action_field", "fields", "actions"});
  const auto text_member = [&](const char* key, std::string& out, bool required) {
    const auto it = root.FindMember(key);
    if (it == root.MemberEnd()) {
      if (required) problem("", std::string("missing \"") + key + "\"");
    } else if (!it->value.IsString() || it->value.GetStringLength() == 0) {
      problem(child("", key), "must be a non-empty string");
    } else {
      out = json::string_of(it->value);
    }
  };
  text_member("name", m_catalog.m_name, true);
  text_member("description", m_catalog.m_description, false);
  text_member("action_field", m_catalog.m_action_field, true);
  if (!m_catalog.m_action_field.empty() && !is_identifier(m_catalog.m_action_field)) {
    problem("/action_field", "must be letters, digits, '_', '-' or '.' (at most 64)");
  }

  const auto fields = root.FindMember("fields");
  if (fields == root.MemberEnd() || !fields->value.IsObject()) {
    problem("", "\"fields\" must be an object of field schemas");
  } else {
    for (const auto& member : fields->value.GetObject()) {
      const std::string name(json::string_of(member.name));
      read_field(name, member.value, child("/fields", name));
    }
  }

  const auto actions = root.FindMember("actions");
  if (actions == root.MemberEnd() || !actions->value.IsArray() || actions->value.Empty()) {
    problem("", "\"actions\" must be a non-empty array");
    return;
  }
  for (rapidjson::SizeType i = 0; i < actions->value.Size(); ++i) {
    read_action(actions->value[i], child("/actions", i));
  }
  for (const auto& field : m_catalog.m_fields) {
    const bool used = std::any_of(m_catalog.m_actions.begin(), m_catalog.m_actions.end(),
                                  [&](const Action& a) { return a.uses(field.name); });
    if (!used) problem(child("/fields", field.name), "no action uses this field");
  }
}

// Checks that an enum or const member has the field's type; integers and strings only,
// so that canonical JSON text comparison is exact.
bool CatalogReader::check_literal(const Field& field, const Value& value, const std::string& at) {
  const bool ok = (field.schema.type == FieldType::string && value.IsString()) ||
                  (field.schema.type == FieldType::integer && (value.IsInt64() || value.IsUint64())) ||
                  (field.schema.type == FieldType::boolean && value.IsBool());
  if (!ok)
    problem(at, std::string("must be a ") + to_string(field.schema.type) +
                    " literal (enum and const take strings, integers or booleans)");
  return ok;
}

void CatalogReader::read_field(const std::string& name, const Value& value, const std::string& at) {
  if (!is_identifier(name)) problem(at, "field names are letters, digits, '_', '-' or '.' (at most 64)");
  if (name == m_catalog.m_action_field) problem(at, "a field cannot share the action field's name");
  if (!value.IsObject()) {
    problem(at, "a field schema must be an object");
    return;
  }
  check_keys(value, at,
             {"type", "description", "enum", "const", "minLength", "maxLength", "pattern", "minimum", "maximum",
              "format", "grounded"});
  Field field{name, {}, "/" + text::pointer_token(name)};
  FieldSchema& schema = field.schema;
  const auto type = value.FindMember("type");
  const auto parsed_type =
      type != value.MemberEnd() && type->value.IsString() ? parse_type(json::string_of(type->value)) : std::nullopt;
  if (!parsed_type) {
    problem(child(at, "type"),
            "\"type\" must be \"string\", \"integer\", \"number\", \"boolean\", \"buttons\" or \"list\"");
    return;
  }
  schema.type = *parsed_type;
  const bool is_string = schema.type == FieldType::string;
  const bool is_numeric = schema.type == FieldType::integer || schema.type == FieldType::number;

  for (const auto& member : value.GetObject()) {
    const std::string_view key = json::string_of(member.name);
    const std::string here = child(at, key);
    const Value& v = member.value;
    if (key == "description") {
      if (v.IsString())
        schema.description = json::string_of(v);
      else
        problem(here, "must be a string");
    } else if (key == "enum") {
      if (!v.IsArray() || v.Empty()) {
        problem(here, "must be a non-empty array");
        continue;
      }
      std::set<std::string> seen;
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        if (!check_literal(field, v[i], child(here, i))) continue;
        std::string canonical = json::to_string(v[i]);
        if (!seen.insert(canonical).second) problem(child(here, i), "duplicate enum value");
        schema.enum_values.push_back(std::move(canonical));
      }
    } else if (key == "const") {
      if (check_literal(field, v, here)) schema.const_value = json::to_string(v);
    } else if (key == "minLength" || key == "maxLength") {
      if (!is_string)
        problem(here, "applies to strings only");
      else if (!v.IsUint64())
        problem(here, "must be a non-negative integer");
      else
        (key == "minLength" ? schema.min_length : schema.max_length) = v.GetUint64();
    } else if (key == "minimum" || key == "maximum") {
      if (!is_numeric)
        problem(here, "applies to integers and numbers only");
      else if (!v.IsNumber())
        problem(here, "must be a number");
      else
        (key == "minimum" ? schema.minimum : schema.maximum) = v.GetDouble();
    } else if (key == "pattern") {
      if (!is_string || !v.IsString()) {
        problem(here, "must be a string, on a string field");
        continue;
      }
      try {
        schema.compiled_pattern =
            std::make_shared<const std::regex>(std::string(json::string_of(v)), std::regex::ECMAScript);
        schema.pattern = std::string(json::string_of(v));
      } catch (const std::regex_error& e) {
        problem(here, std::string("not a valid ECMAScript regular expression: ") + e.what());
      }
    } else if (key == "format") {
      if (!is_string || !v.IsString() || json::string_of(v) != "date")
        problem(here, "the only format is \"date\", on strings");
      else
        schema.date = true;
    } else if (key == "grounded") {
      if (v.IsBool())
        schema.grounding = v.GetBool() ? Grounding::reject : Grounding::none;
      else if (v.IsString() && json::string_of(v) == "reject")
        schema.grounding = Grounding::reject;
      else if (v.IsString() && json::string_of(v) == "review")
        schema.grounding = Grounding::review;
      else
        problem(here, "must be true, false, \"reject\" or \"review\"");
      if (schema.grounding != Grounding::none && !is_string && schema.type != FieldType::integer) {
        problem(here, "only string and integer fields can be grounded");
      }
    }
  }
  if (schema.min_length && schema.max_length && *schema.min_length > *schema.max_length) {
    problem(at, "minLength is greater than maxLength");
  }
  if (schema.minimum && schema.maximum && *schema.minimum > *schema.maximum) {
    problem(at, "minimum is greater than maximum");
  }
  m_catalog.m_fields.push_back(std::move(field));
}

void CatalogReader::read_field_names(std::vector<std::string>& out, const Value& value, const std::string& at) {
  if (!value.IsArray()) {
    problem(at, "must be an array of field names");
    return;
  }
  for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
    if (!value[i].IsString()) {
      problem(child(at, i), "must be a field name");
      continue;
    }
    const std::string name(json::string_of(value[i]));
    if (!m_catalog.find_field(name)) problem(child(at, i), "unknown field " + text::quote(name));
    if (std::find(out.begin(), out.end(), name) != out.end()) problem(child(at, i), "listed twice");
    out.push_back(name);
  }
}

void CatalogReader::read_action(const Value& value, const std::string& at) {
  if (!value.IsObject()) {
    problem(at, "an action must be an object");
    return;
  }
  check_keys(value, at,
             {"name", "description", "kind", "required", "optional", "text_field", "interactive_field", "policy",
              "http", "mcp", "template", "examples"});
  Action action;
  const auto name = value.FindMember("name");
  if (name == value.MemberEnd() || !name->value.IsString() || !is_identifier(json::string_of(name->value))) {
    problem(child(at, "name"), "\"name\" must be letters, digits, '_', '-' or '.' (at most 64)");
  } else {
    action.name = json::string_of(name->value);
    if (m_catalog.find_action(action.name)) problem(child(at, "name"), "duplicate action name");
  }
  const auto description = value.FindMember("description");
  if (description == value.MemberEnd() || !description->value.IsString() || description->value.GetStringLength() == 0) {
    problem(child(at, "description"), "\"description\" must be a non-empty string (the model reads it)");
  } else {
    action.description = json::string_of(description->value);
  }
  const auto kind = value.FindMember("kind");
  const auto parsed_kind =
      kind != value.MemberEnd() && kind->value.IsString() ? parse_kind(json::string_of(kind->value)) : std::nullopt;
  if (!parsed_kind)
    problem(child(at, "kind"),
            "\"kind\" must be \"reply\", \"escalate\", \"ignore\", \"http\", \"mcp\" or \"template\"");
  else
    action.kind = *parsed_kind;

  if (const auto it = value.FindMember("required"); it != value.MemberEnd()) {
    read_field_names(action.required, it->value, child(at, "required"));
  }
  if (const auto it = value.FindMember("optional"); it != value.MemberEnd()) {
    read_field_names(action.optional, it->value, child(at, "optional"));
  }
  if (const auto it = value.FindMember("text_field"); it != value.MemberEnd()) {
    if (it->value.IsString())
      action.text_field = std::string(json::string_of(it->value));
    else
      problem(child(at, "text_field"), "must be a field name");
  }
  if (const auto it = value.FindMember("interactive_field"); it != value.MemberEnd()) {
    if (it->value.IsString())
      action.interactive_field = std::string(json::string_of(it->value));
    else
      problem(child(at, "interactive_field"), "must be a field name");
  }
  if (const auto it = value.FindMember("policy"); it != value.MemberEnd()) {
    read_policy(action, it->value, child(at, "policy"));
  }
  if (const auto it = value.FindMember("http"); it != value.MemberEnd()) {
    read_http(action, it->value, child(at, "http"));
  }
  if (const auto it = value.FindMember("mcp"); it != value.MemberEnd()) {
    read_mcp(action, it->value, child(at, "mcp"));
  }
  if (const auto it = value.FindMember("template"); it != value.MemberEnd()) {
    read_template(action, it->value, child(at, "template"));
  }
  if (const auto it = value.FindMember("examples"); it != value.MemberEnd()) {
    if (!it->value.IsArray())
      problem(child(at, "examples"), "must be an array");
    else
      for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
        read_example(action, it->value[i], child(child(at, "examples"), i));
      }
  }
  check_action(action, at);
  m_catalog.m_actions.push_back(std::move(action));
}

void CatalogReader::check_action(const Action& action, const std::string& at) {
  for (const auto& name : action.optional) {
    if (action.needs(name)) problem(child(at, "optional"), text::quote(name) + " is also required");
  }
  if (const auto& recipient = action.policy.recipient_field) {
    const Field* field = m_catalog.find_field(*recipient);
    if (!action.needs(*recipient) || !field || field->schema.type != FieldType::string) {
      problem(child(child(at, "policy"), "recipient_field"), "must name a string field the action requires");
    }
  }
  const bool acts = action.mcp && action.mcp->use == McpUse::act;
  if (action.kind == ActionKind::reply ? !action.text_field : action.text_field && !acts) {
    problem(at,
            "an action has \"text_field\" exactly when its kind is \"reply\" (it names the field sent as the message)"
            ", or may when it is an mcp act (the reply sent once the tool succeeded)");
  } else if (action.text_field) {
    const Field* field = m_catalog.find_field(*action.text_field);
    if (!action.needs(*action.text_field) || !field || field->schema.type != FieldType::string) {
      problem(child(at, "text_field"), "must name a string field the action requires");
    }
  }
  check_interactive(action, at);
  if ((action.kind == ActionKind::http) != action.http.has_value()) {
    problem(at, "an action has \"http\" exactly when its kind is \"http\"");
  }
  if ((action.kind == ActionKind::mcp) != action.mcp.has_value()) {
    problem(at, "an action has \"mcp\" exactly when its kind is \"mcp\"");
  }
  if ((action.kind == ActionKind::template_message) != action.template_message.has_value()) {
    problem(at, "an action has \"template\" exactly when its kind is \"template\"");
  }
  if (action.template_message) check_template(action, child(at, "template"));
  if (action.mcp) {
    // Two fields sent as one argument would be one overwriting the other.
    std::map<std::string, std::string, std::less<>> sent;  // argument -> field
    for (const auto& field : m_catalog.fields()) {
      if (!action.uses(field.name)) continue;
      const std::string& argument = action.mcp->argument_of(field.name);
      if (const auto [it, fresh] = sent.emplace(argument, field.name); !fresh)
        problem(child(child(at, "mcp"), "arguments"), "fields " + text::quote(it->second) + " and " +
                                                          text::quote(field.name) + " are both sent as " +
                                                          text::quote(argument));
    }
    for (const auto& [field, argument] : action.mcp->arguments) {
      if (!action.uses(field))
        problem(child(child(child(at, "mcp"), "arguments"), field),
                text::quote(field) + " is not a field the action requires or allows");
    }
  }
  if (action.http) {
    for (const auto& name : placeholders(action.http->url)) {
      if (!action.needs(name)) {
        problem(child(child(at, "http"), "url"), "placeholder {" + name + "} is not a field the action requires");
      }
    }
  }
}

// Interactive fields are opted into per action: a buttons or list field is used only as the
// interactive_field of a reply action, so no other kind (a tool's arguments, an escalation)
// ever receives a structured value.
void CatalogReader::check_interactive(const Action& action, const std::string& at) {
  for (const auto& field : m_catalog.fields()) {
    const bool structured = field.schema.type == FieldType::buttons || field.schema.type == FieldType::list;
    if (structured && action.uses(field.name) && action.interactive_field != field.name)
      problem(at, text::quote(field.name) + " is a " + to_string(field.schema.type) +
                      " field: only the action's \"interactive_field\" may use it");
  }
  if (!action.interactive_field) return;
  const Field* field = m_catalog.find_field(*action.interactive_field);
  if (action.kind != ActionKind::reply || !action.text_field) {
    problem(child(at, "interactive_field"), "only a reply action (with its text_field) sends choices");
  } else if (!field || !action.uses(field->name) ||
             (field->schema.type != FieldType::buttons && field->schema.type != FieldType::list)) {
    problem(child(at, "interactive_field"), "must name a buttons or list field the action requires or allows");
  }
}

void CatalogReader::read_policy(Action& action, const Value& value, const std::string& at) {
  if (!value.IsObject()) {
    problem(at, "must be an object");
    return;
  }
  check_keys(value, at, {"recipient_field", "requires_approval"});
  if (const auto it = value.FindMember("recipient_field"); it != value.MemberEnd()) {
    if (it->value.IsString())
      action.policy.recipient_field = std::string(json::string_of(it->value));
    else
      problem(child(at, "recipient_field"), "must be a field name");
  }
  if (const auto it = value.FindMember("requires_approval"); it != value.MemberEnd()) {
    if (it->value.IsBool())
      action.policy.requires_approval = it->value.GetBool();
    else
      problem(child(at, "requires_approval"), "must be true or false");
  }
}

void CatalogReader::read_http(Action& action, const Value& value, const std::string& at) {
  if (!value.IsObject()) {
    problem(at, "must be an object");
    return;
  }
  check_keys(value, at, {"method", "url"});
  HttpTool tool;
  if (const auto it = value.FindMember("method"); it != value.MemberEnd()) {
    // Catalog tools are read-only by design: a tool the model can call must not change
    // anything, so only GET is accepted.
    if (!it->value.IsString() || json::string_of(it->value) != "GET")
      problem(child(at, "method"), "must be \"GET\" (tools are read-only)");
  }
  const auto url = value.FindMember("url");
  if (url == value.MemberEnd() || !url->value.IsString() ||
      !(json::string_of(url->value).starts_with("http://") || json::string_of(url->value).starts_with("https://"))) {
    problem(child(at, "url"), "\"url\" must be an http:// or https:// URL template");
  } else {
    tool.url = json::string_of(url->value);
  }
  action.http = std::move(tool);
}

void CatalogReader::read_mcp(Action& action, const Value& value, const std::string& at) {
  if (!value.IsObject()) {
    problem(at, "must be an object: {\"server\", \"tool\", \"use\", \"arguments\"}");
    return;
  }
  check_keys(value, at, {"server", "tool", "use", "arguments"});
  McpTool tool;
  const auto name_of = [&](const char* key, std::string& out, const char* what) {
    const auto it = value.FindMember(key);
    if (it == value.MemberEnd() || !it->value.IsString() || it->value.GetStringLength() == 0 ||
        it->value.GetStringLength() > 128)
      return problem(child(at, key), std::string("must be ") + what + " (a non-empty string of at most 128 bytes)");
    out = json::string_of(it->value);
  };
  name_of("server", tool.server, "the name of a server in the configuration's mcp.servers");
  name_of("tool", tool.tool, "the tool's name as its server lists it");
  const auto use = value.FindMember("use");
  const std::string_view use_name =
      use != value.MemberEnd() && use->value.IsString() ? json::string_of(use->value) : std::string_view();
  if (use_name == "lookup")
    tool.use = McpUse::lookup;
  else if (use_name == "act")
    tool.use = McpUse::act;
  else
    problem(child(at, "use"),
            "must be \"lookup\" (the result goes back to the model as data) or \"act\" (the call is the decision)");
  if (const auto it = value.FindMember("arguments"); it != value.MemberEnd()) {
    if (!it->value.IsObject()) {
      problem(child(at, "arguments"), "must be an object: catalog field -> the tool's argument name");
    } else {
      for (const auto& member : it->value.GetObject()) {
        const std::string field(json::string_of(member.name));
        const std::string here = child(child(at, "arguments"), field);
        if (!m_catalog.find_field(field)) problem(here, "unknown field " + text::quote(field));
        if (!member.value.IsString() || member.value.GetStringLength() == 0)
          problem(here, "must be the tool's argument name (a non-empty string)");
        else
          tool.arguments.emplace(field, json::string_of(member.value));
      }
    }
  }
  action.mcp = std::move(tool);
}

void CatalogReader::read_example(Action& action, const Value& value, const std::string& at) {
  if (!value.IsObject()) {
    problem(at, "an example must be an object");
    return;
  }
  check_keys(value, at, {"valid", "output", "reason", "expect", "sender", "source"});
  Example example;
  example.pointer = at;
  const auto valid = value.FindMember("valid");
  if (valid == value.MemberEnd() || !valid->value.IsBool())
    problem(child(at, "valid"), "must be true or false");
  else
    example.valid = valid->value.GetBool();
  const auto output = value.FindMember("output");
  if (output == value.MemberEnd())
    problem(at, "missing \"output\" (an object, or the raw reply as a string)");
  else
    example.reply =
        output->value.IsString() ? std::string(json::string_of(output->value)) : json::to_string(output->value);
  const auto reason = value.FindMember("reason");
  if (reason == value.MemberEnd() || !reason->value.IsString() || reason->value.GetStringLength() == 0) {
    problem(child(at, "reason"), "every example says why it is right or wrong");
  } else {
    example.reason = json::string_of(reason->value);
  }
  const auto optional_text = [&](const char* key, std::string& out) {
    const auto it = value.FindMember(key);
    if (it == value.MemberEnd()) return;
    if (it->value.IsString())
      out = json::string_of(it->value);
    else
      problem(child(at, key), "must be a string");
  };
  optional_text("expect", example.expect_code);
  optional_text("sender", example.sender);
  optional_text("source", example.source);
  if (example.valid && !example.expect_code.empty())
    problem(child(at, "expect"), "only invalid examples expect an error");
  action.examples.push_back(std::move(example));
}

}  // namespace dispatchd::catalog
