#include "validator/outbound.h"

#include "common/interactive.h"
#include "common/json_access.h"
#include "common/json_out.h"
#include "common/strict_json.h"
#include "common/template_send.h"
#include "validator/checks.h"

namespace dispatchd::validator {
namespace {

// A parameter's text: a string as it is, a number as JSON writes it.
std::optional<std::string> parameter_text(const rapidjson::Value* value) {
  if (value == nullptr || value->IsNull()) return std::nullopt;
  if (value->IsString()) return std::string(json::string_of(*value));
  if (value->IsNumber()) return json::to_string(*value);
  return std::nullopt;
}

// The template a template action sends, filled from `doc`; nullopt when a parameter's field
// is not set (the contract stage requires each, so this is a verdict from elsewhere).
std::optional<template_send::TemplateSend> template_of(const catalog::TemplateMessage& message,
                                                       const rapidjson::Value& doc) {
  template_send::TemplateSend out{message.name, message.language, {}};
  for (const auto& p : message.parameters) {
    auto text = parameter_text(json::member(doc, p.field));
    if (!text) return std::nullopt;
    out.parameters.push_back({p.part, p.button, p.name, std::move(*text)});
  }
  return out;
}

}  // namespace

std::optional<Outbound> outbound_of(const catalog::Catalog& catalog, const Verdict& verdict,
                                    const std::string& counterpart) {
  if (!verdict.ok) return std::nullopt;
  const catalog::Action* action = catalog.find_action(verdict.action);
  if (!action) return std::nullopt;
  const bool text = action->kind == catalog::ActionKind::reply && action->text_field;
  if (!text && !action->template_message) return std::nullopt;
  // The output is the validator's own compact JSON: it parses, and its strings are UTF-8.
  auto parsed = json::parse_strict(verdict.output, json::k_checked_json_limits);
  if (!parsed || !parsed->document.IsObject()) return std::nullopt;
  const rapidjson::Value& doc = parsed->document;
  Outbound out{counterpart, {}, std::nullopt, std::nullopt, std::nullopt};
  if (text) {
    auto body = json::string_member(doc, *action->text_field);
    if (!body) return std::nullopt;
    out.body = std::move(*body);
  } else {
    auto filled = template_of(*action->template_message, doc);
    if (!filled) return std::nullopt;
    out.body = template_send::summary(*filled);
    out.template_message = template_send::to_json(*filled);
  }
  if (action->interactive_field) {
    const rapidjson::Value* value = json::member(doc, *action->interactive_field);
    const catalog::Field* field = catalog.find_field(*action->interactive_field);
    if (value != nullptr && !value->IsNull() && field != nullptr) {
      const auto kind =
          field->schema.type == catalog::FieldType::buttons ? interactive::Kind::buttons : interactive::Kind::list;
      // Checked by the contract stage already: a value that now fails sends nothing.
      auto choices = interactive::read(kind, json::to_string(*value));
      if (!choices) return std::nullopt;
      out.interactive = interactive::to_json(*choices);
    }
  }
  if (!action->policy.recipient_field) return out;
  auto written = json::string_member(doc, *action->policy.recipient_field);
  // The policy let the reply through because it names the counterpart, in whatever form; the
  // message goes to the counterpart as stored, which is what the channel and the 24-hour
  // window know. A verdict checked against no sender or another one sends nothing.
  if (!written || !same_counterpart(*written, counterpart)) return std::nullopt;
  if (*written != counterpart) out.recipient_written = std::move(*written);
  return out;
}

std::optional<std::string> tool_arguments(const catalog::Catalog& catalog, const catalog::Action& action,
                                          const std::string& output) {
  if (!action.mcp) return std::nullopt;
  auto parsed = json::parse_strict(output, json::k_checked_json_limits);
  if (!parsed || !parsed->document.IsObject()) return std::nullopt;
  JsonOut out;
  out.begin_object();
  for (const auto& field : catalog.fields()) {
    if (!action.uses(field.name)) continue;
    const rapidjson::Value* value = json::member(parsed->document, field.name);
    if (value == nullptr || value->IsNull()) continue;
    out.raw(action.mcp->argument_of(field.name), json::to_string(*value));
  }
  out.end_object();
  return out.str();
}

std::optional<ToolCall> tool_call_of(const catalog::Catalog& catalog, const Verdict& verdict,
                                     const std::string& counterpart) {
  if (!verdict.ok) return std::nullopt;
  const catalog::Action* action = catalog.find_action(verdict.action);
  if (!action || !action->mcp || action->mcp->use != catalog::McpUse::act) return std::nullopt;
  auto parsed = json::parse_strict(verdict.output, json::k_checked_json_limits);
  if (!parsed || !parsed->document.IsObject()) return std::nullopt;
  const rapidjson::Value& doc = parsed->document;
  std::optional<std::string> written;
  if (action->policy.recipient_field) {
    written = json::string_member(doc, *action->policy.recipient_field);
    if (!written || !same_counterpart(*written, counterpart)) return std::nullopt;
  }
  auto arguments = tool_arguments(catalog, *action, verdict.output);
  if (!arguments) return std::nullopt;
  ToolCall call{action->mcp->server, action->mcp->tool, std::move(*arguments), std::nullopt};
  if (action->text_field) {
    auto text = json::string_member(doc, *action->text_field);
    if (!text) return std::nullopt;
    call.follow_up = Outbound{counterpart, std::move(*text), std::nullopt, std::nullopt, std::nullopt};
    if (written && *written != counterpart) call.follow_up->recipient_written = std::move(*written);
  }
  return call;
}

}  // namespace dispatchd::validator
