#pragma once
// Pinning a catalog action to an MCP tool: the tool's `inputSchema`, as its server lists it,
// must accept every arguments object the catalog's validator can let through, or the action
// may not call it. A server that changes its schema (narrower types, a new required
// property, a closed set of properties) thus cannot make dispatchd send what it refuses,
// and a wider schema gains the server nothing: only the catalog's fields are ever sent.
//
// The check is conservative: what it cannot prove is a problem. Per property, the server's
// keywords must be ones it understands and no stricter than the catalog's field:
//   type       the field's type among the server's (an integer field also fits "number");
//   enum/const every value the field allows among the server's, so the field needs an enum
//              or a const itself;
//   minimum/maximum, exclusiveMinimum/exclusiveMaximum, minLength/maxLength
//              the field's own bound at least as tight;
//   pattern    the field has the very same pattern;
//   format     "date" when the field is a date; no other format;
//   description, title, default, examples, $comment: annotations, ignored.
// At the top: "type" "object"; every `required` property one the action always sends; with
// `additionalProperties: false` every argument among `properties` (any other value of
// additionalProperties than true or false is a problem). `$ref`, `$defs`, `allOf`/`anyOf`/
// `oneOf`/`not`, `if`, and any keyword not named here, anywhere, are problems.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "mcp/protocol.h"

namespace dispatchd::mcp {

// One catalog field as the tool receives it.
struct PinnedArgument {
  std::string field;     // the catalog field's name
  std::string argument;  // the tool's property: the field's name, or the action's renaming
  catalog::FieldSchema schema;
  bool always_sent = false;  // required by the action: never null or left out
};

// What keeps the tool's `input_schema_json` (its inputSchema, compact JSON) from accepting
// every arguments object made of `arguments`, one sentence each naming the field, the
// argument and the keyword; empty when the tool accepts them all.
std::vector<std::string> pin_problems(const std::vector<PinnedArgument>& arguments, std::string_view input_schema_json);

// What `action` (kind mcp) sends: every field it uses, under its argument name.
std::vector<PinnedArgument> pinned_arguments(const catalog::Catalog& catalog, const catalog::Action& action);

// Whether a catalog action may call its tool.
enum class PinState {
  pinned,          // the tool is listed and its schema accepts what the action sends
  unknown_server,  // the configuration has no server of that name
  server_down,     // the server has not listed its tools (starting, failed, stopped)
  missing_tool,    // the server does not list the tool
  incompatible,    // the tool's inputSchema refuses something the action may send
};
std::string_view to_string(PinState state);

struct ActionPin {
  std::string action;
  std::string server;
  std::string tool;
  PinState state = PinState::server_down;
  std::vector<std::string> problems;  // incompatible: pin_problems(); otherwise empty
  bool operator==(const ActionPin&) const = default;
};

// One line naming the action, its server and tool, and what keeps it from its tool (or "pinned").
std::string describe(const ActionPin& pin);

// What the servers listed: name -> its tools once listed, nullopt while it has not (down).
using ServerTools = std::map<std::string, std::optional<std::vector<Tool>>, std::less<>>;

// The verdict for every mcp action of `catalog`, in catalog order. A tool a server lists and
// no action names plays no part: it is never called.
std::vector<ActionPin> pin_actions(const catalog::Catalog& catalog, const ServerTools& servers);

}  // namespace dispatchd::mcp
