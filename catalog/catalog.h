#pragma once
// The closed catalog of actions the model may choose from, loaded from a JSON file.
//
// The model's reply is ONE JSON object: the action field (its name is set by the catalog,
// e.g. "accion" or "action") holds one of the action names, and the other members are the
// catalog's fields. Fields are declared once at the top level, because every action's reply
// is the same object; each action says which fields it requires and which it allows.
// A field that an action does not use must be null or absent in that action's reply.
//
// A Catalog is immutable after loading and safe to share between threads.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "common/template_send.h"

namespace dispatchd::catalog {

// buttons and list are interactive fields (common/interactive.h): the choices a reply action
// may send with its text, in the shape and within the limits of WhatsApp's reply buttons and
// list messages. Only an action's interactive_field may be of these types.
enum class FieldType { string, integer, number, boolean, buttons, list };

// What happens when a grounded field's value does not appear verbatim in the inbound
// message: the reply is rejected (and re-asked), or accepted but routed to staff review.
enum class Grounding { none, reject, review };

// A field's constraints: the JSON Schema subset the catalog file accepts.
struct FieldSchema {
  FieldType type = FieldType::string;
  std::string description;
  // Allowed values as canonical compact JSON (`"alta"`, `3`, `true`); empty means any.
  std::vector<std::string> enum_values;
  std::optional<std::string> const_value;  // canonical JSON, like enum_values
  std::optional<std::size_t> min_length;   // in Unicode code points
  std::optional<std::size_t> max_length;
  std::optional<std::string> pattern;                  // ECMAScript regex, unanchored (JSON Schema)
  std::shared_ptr<const std::regex> compiled_pattern;  // set exactly when pattern is
  std::optional<double> minimum;
  std::optional<double> maximum;
  bool date = false;  // "format": "date": YYYY-MM-DD, a real day
  Grounding grounding = Grounding::none;
};

struct Field {
  std::string name;
  FieldSchema schema;
  std::string pointer;  // "/name" as a JSON pointer into the reply, escaped
};

// Who executes a valid action. template_message ("template" in the file) sends an approved
// message template, its parameters filled from the action's fields (TemplateMessage): the one
// kind that reaches a counterpart whose reply window is closed.
enum class ActionKind { reply, escalate, ignore, http, mcp, template_message };

struct Policy {
  // The field whose value must name the conversation's counterpart (the WhatsApp sender's
  // wa_id, or the email's Reply-To/From). Stops injected text from redirecting a reply.
  std::optional<std::string> recipient_field;
  // A valid reply is queued for staff approval instead of running unattended.
  bool requires_approval = false;
};

// A read-only HTTP tool (kind "http"). `url` may hold {field} placeholders, filled with
// the percent-encoded values of the action's fields.
struct HttpTool {
  std::string method = "GET";
  std::string url;
};

// How an MCP tool (kind "mcp") is used: its result goes back to the model as data (lookup,
// like an http tool), or the call is the decision itself (act: made once, through the
// outbox, after the decision is durable; the action's text_field, when it has one, is the
// reply sent to the customer once the tool succeeded).
enum class McpUse { lookup, act };

// A tool of a configured MCP server (kind "mcp"). The arguments it receives are the
// action's validated fields that are set, each under its own name or the one `arguments`
// gives it. The catalog names the server only: the configuration says where it is.
struct McpTool {
  std::string server;  // a key of the configuration's mcp.servers
  std::string tool;    // the tool's name as the server lists it
  McpUse use = McpUse::lookup;
  std::map<std::string, std::string, std::less<>> arguments;  // catalog field -> the tool's argument

  // The tool's argument for `field`: its renaming, or the field's own name.
  const std::string& argument_of(const std::string& field) const;
};

// Where a template parameter sits (header, body, a button).
using TemplatePart = template_send::Part;

// One parameter of a template action: the field whose value fills it.
struct TemplateParameter {
  TemplatePart part = TemplatePart::body;
  int button = 0;     // for a button: its position among the template's buttons, from 0
  std::string name;   // as written in the template: "1" for {{1}}, "order_id" for {{order_id}};
                      // a header's media is "image", "video" or "document" (its link)
  std::string field;  // a catalog field the action requires
};

// A template action (kind "template"): which approved template it sends and what fills it.
// The catalog names the template only; whether it exists, is approved and takes exactly
// these parameters is checked against the templates the channel keeps (`dispatchctl catalog
// lint --db`, `dispatchd --check-config`), and again before each send.
struct TemplateMessage {
  std::string name;                           // the template's name, e.g. "order_shipped"
  std::string language;                       // its language code, e.g. "en_US"
  std::vector<TemplateParameter> parameters;  // header, then body, then buttons by position
};

// One example reply with its expected verdict; rendered into the prompt and checked by
// `dispatchctl catalog lint`.
struct Example {
  std::string reply;  // raw model text (an object in the file is serialized)
  bool valid = true;
  std::string reason;       // why it is right or wrong, for the prompt
  std::string expect_code;  // for an invalid example: an error code it must produce
  std::string sender;       // the conversation's counterpart, for the recipient policy
  std::string source;       // the inbound message, for grounding
  std::string pointer;      // where it sits in the file, for lint messages
};

// How an action uses one field: absent or null only, may be null, or must be set.
enum class FieldUse : std::uint8_t { unused, optional, required };

struct Action {
  std::string name;
  std::string description;
  ActionKind kind = ActionKind::reply;
  std::vector<std::string> required;  // fields that must be present and non-null
  std::vector<std::string> optional;  // fields that may be null
  // For kind reply: the field whose value is the message sent to the counterpart (the
  // connector sends it; a staff reply puts its text there). For an mcp act: the reply sent
  // once the tool succeeded (optional).
  std::optional<std::string> text_field;
  // For kind reply: the field (of type buttons or list) whose choices are sent with the
  // text, when the reply sets it; the action opts in by naming it (docs/catalog.md).
  std::optional<std::string> interactive_field;
  Policy policy;
  std::optional<HttpTool> http;                     // set exactly when kind == http
  std::optional<McpTool> mcp;                       // set exactly when kind == mcp
  std::optional<TemplateMessage> template_message;  // set exactly when kind == template_message
  std::vector<Example> examples;

  // uses() and needs() for each field, in Catalog::fields() order: derived at load so
  // that checking a reply compares no names.
  std::vector<FieldUse> field_uses;

  bool uses(std::string_view field) const;
  bool needs(std::string_view field) const;
};

// A problem found while loading: the file, a JSON pointer into it, and what is wrong.
struct Problem {
  std::string file;
  std::string pointer;
  std::string message;

  std::string to_string() const;  // "file:/pointer: message"
};

class Catalog {
 public:
  // Parses a catalog from `text`; `origin` names it in problems. Every problem found is
  // reported, not only the first.
  [[nodiscard]] static std::expected<Catalog, std::vector<Problem>> parse(std::string_view text, std::string origin);
  // Reads and parses a file (at most 1 MiB).
  [[nodiscard]] static std::expected<Catalog, std::vector<Problem>> load_file(const std::string& path);

  const std::string& name() const { return m_name; }
  const std::string& origin() const { return m_origin; }
  const std::string& description() const { return m_description; }
  const std::string& action_field() const { return m_action_field; }
  const std::vector<Field>& fields() const { return m_fields; }
  const std::vector<Action>& actions() const { return m_actions; }
  const std::vector<std::string>& action_names() const { return m_action_names; }
  const std::string& action_pointer() const { return m_action_pointer; }  // "/action"
  // The one-line format, as render_contract_line() makes it; computed once at load.
  const std::string& contract_line() const { return m_contract_line; }

  const Action* find_action(std::string_view name) const;
  const Field* find_field(std::string_view name) const;
  // True when every action requires `field` (then it is never null in a valid reply).
  bool required_by_all(std::string_view field) const;

 private:
  friend class CatalogReader;
  std::string m_name;
  std::string m_origin;
  std::string m_description;
  std::string m_action_field;
  std::vector<Field> m_fields;
  std::vector<Action> m_actions;
  std::vector<std::string> m_action_names;
  std::string m_action_pointer;
  std::string m_contract_line;
};

const char* to_string(FieldType type);
const char* to_string(ActionKind kind);
const char* to_string(McpUse use);

}  // namespace dispatchd::catalog
