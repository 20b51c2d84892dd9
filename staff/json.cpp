#include "staff/json.h"

#include "common/json_out.h"

namespace dispatchd::staff {
namespace {

void escalation_json(JsonOut& out, const store::EscalationRow& e) {
  out.field("escalation_id", e.id).field("message_id", e.message_id).field("reason", e.reason);
  out.field("status", e.status).field("assignee", e.assignee).field("resolution", e.resolution);
  out.field("created_at", e.created_at).field("claimed_at", e.claimed_at).field("resolved_at", e.resolved_at);
  out.field("channel", e.channel).field("sender", e.sender).field("text", e.text);
  out.raw_or_null("proposed_action", e.proposed_action).raw_or_null("detail", e.detail);
}

}  // namespace

std::string escalations_json(const std::vector<store::EscalationRow>& rows) {
  JsonOut out;
  out.begin_array();
  for (const auto& row : rows) {
    out.begin_object();
    escalation_json(out, row);
    out.end_object();
  }
  out.end_array();
  return out.str();
}

std::string case_json(const store::EscalationCase& c) {
  JsonOut out;
  out.begin_object();
  escalation_json(out, c.escalation);
  out.begin_array("conversation");
  for (const auto& m : c.conversation) {
    out.begin_object().field("message_id", m.id).field("received_at", m.received_at).field("sender", m.sender);
    out.field("text", m.text).field("outcome", m.outcome).end_object();
  }
  out.end_array().begin_array("attempts");
  for (const auto& a : c.attempts) {
    out.begin_object().field("attempt", a.attempt).field("provider", a.provider).field("model", a.model);
    out.field("raw_output", a.raw_output).field("verdict", a.verdict).raw_or_null("errors", a.errors);
    out.field("error_class", a.error_class).field("latency_ms", a.latency_ms).field("input_tokens", a.input_tokens);
    out.field("output_tokens", a.output_tokens).field("finish_reason", a.finish_reason).end_object();
  }
  out.end_array().begin_array("actions");
  for (const auto& a : c.actions) {
    out.begin_object().field("action_id", a.id).field("action", a.action).raw_or_null("arguments", a.arguments);
    out.field("recipient", a.recipient).field("body", a.body).field("status", a.status);
    out.field("created_by", a.created_by).field("error", a.error).end_object();
  }
  out.end_array().end_object();
  return out.str();
}

}  // namespace dispatchd::staff
