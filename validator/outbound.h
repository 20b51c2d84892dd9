#pragma once
// What a valid reply sends: for an action of kind reply, the recipient and the message text
// (its text_field), decoded from the verdict's output; for a template action, the template
// with its parameters filled from the fields (common/template_send.h) and a one-line summary
// as the text; for an mcp action with "use": "act",
// the tool call and the reply that follows it. Shared by the agent loop and the staff
// commands so both fill the outbox the same way.
//
// The recipient is always the conversation's counterpart exactly as the inbox stores it
// (the WhatsApp wa_id, the email address): the policy accepts other forms of it
// ("+52 1 55 1234 5678" for 5215512345678, "Ana@Example.com" for ana@example.com), but
// the channel, the 24-hour window and the audit queries know it only as stored.

#include <optional>
#include <string>

#include "catalog/catalog.h"
#include "validator/validator.h"

namespace dispatchd::validator {

struct Outbound {
  std::string recipient;  // the counterpart as stored
  std::string body;
  // The choices sent with the text (interactive::to_json), when the action has an
  // interactive_field and the reply set it.
  std::optional<std::string> interactive;
  // The template sent instead of a text (template_send::to_json), for a template action.
  std::optional<std::string> template_message;
  // The policy's recipient_field as the reply wrote it, when that differs from `recipient`
  // (kept for the audit trail).
  std::optional<std::string> recipient_written;
};

// nullopt unless `verdict` is ok, its action is a reply with a text field (or a template
// action with every parameter's field set) and, when the
// action has a recipient_field, that field names `counterpart` (validator::validate checked
// it when given `counterpart` as Context::sender; a verdict checked against no sender or
// another one sends nothing).
std::optional<Outbound> outbound_of(const catalog::Catalog& catalog, const Verdict& verdict,
                                    const std::string& counterpart);

// The arguments object an mcp action sends: each field it uses that is set (not null) in
// `output` (a validated reply), under its argument name (catalog::McpTool::argument_of).
std::optional<std::string> tool_arguments(const catalog::Catalog& catalog, const catalog::Action& action,
                                          const std::string& output);

// A decided tool call (an mcp action with "use": "act").
struct ToolCall {
  std::string server;
  std::string tool;
  std::string arguments;              // compact JSON object
  std::optional<Outbound> follow_up;  // the reply to the counterpart once the tool succeeded
};

// nullopt unless `verdict` is ok, its action is an mcp act, and (with a recipient_field)
// that field names `counterpart`, as for outbound_of. The follow-up is the action's
// text_field, to the counterpart as stored, when the action has one.
std::optional<ToolCall> tool_call_of(const catalog::Catalog& catalog, const Verdict& verdict,
                                     const std::string& counterpart);

}  // namespace dispatchd::validator
