#include "staff/json.h"

#include "common/json_out.h"
#include "media/policy.h"
#include "staff/handover.h"

namespace dispatchd::staff {
namespace {

// One file of the message: what it is, whether it is kept, and how the page may show it
// (media/policy.h's serving(): "image" or "audio" inline, "download" otherwise; null when
// no bytes are kept). The bytes are at GET /api/media/{id}.
void media_json(JsonOut& out, const store::MediaRow& m) {
  out.begin_object()
      .field("media_id", m.id)
      .field("kind", store::to_sql(m.kind))
      .field("state", store::to_sql(m.state));
  out.field("content_type", m.declared_type)
      .field("sniffed_type", m.sniffed_type)
      .field("type_mismatch", m.type_mismatch);
  if (m.size) out.field("size", *m.size);
  out.field("filename", m.filename).field("voice", m.voice).field("reason", m.reason);
  if (m.state == store::MediaState::stored) {
    switch (media::serving(m.declared_type, m.sniffed_type)) {
      case media::Disposition::inline_image: out.field("display", "image"); break;
      case media::Disposition::inline_audio: out.field("display", "audio"); break;
      case media::Disposition::attachment: out.field("display", "download"); break;
    }
  } else {
    out.raw("display", "null");
  }
  out.end_object();
}

void escalation_json(JsonOut& out, const store::EscalationRow& e) {
  out.field("escalation_id", e.id).field("message_id", e.message_id).field("reason", store::to_sql(e.reason));
  out.field("status", store::to_sql(e.status)).field("assignee", e.assignee).field("resolution", e.resolution);
  out.field("created_at", e.created_at).field("claimed_at", e.claimed_at).field("resolved_at", e.resolved_at);
  out.field("channel", e.channel).field("sender", e.sender).field("text", e.text);
  out.raw_or_null("proposed_action", e.proposed_action).raw_or_null("detail", e.detail);
}

// A take-over asked by someone other than the holder: 0 allowed now, the minutes left, or
// none when there is no claim to take.
std::optional<std::int64_t> takeover_in_minutes(const store::ClaimState& claim, const DeskClock& clock) {
  const HandOverAsk ask{.kind = store::HandOverKind::takeover, .actor = ""};
  const auto rule = hand_over_rule(claim, ask, clock.now, clock.idle_limit);
  if (rule) return 0;
  if (rule.error().kind == HandOverRefusalKind::not_idle) return rule.error().minutes_left;
  return std::nullopt;
}

void reach_json(JsonOut& out, const CaseWindow& reach) {
  if (reach.window) {
    out.begin_object("window").field("open", reach.window->open);
    std::optional<std::string> closes;
    if (reach.window->closes_at) closes = store::format_time(*reach.window->closes_at);
    out.field("closes_at", closes).end_object();
  } else {
    out.field("window", nullptr);
  }
  out.begin_array("templates");
  for (const auto& t : reach.templates) {
    std::optional<std::string> status;
    std::optional<std::string> category;
    if (t.status) status = std::string(store::to_sql(*t.status));
    if (t.category) category = std::string(store::to_sql(*t.category));
    out.begin_object().field("action", t.action).field("template", t.name).field("language", t.language);
    out.field("status", status).field("category", category).field("approved", t.approved());
    out.raw("components", t.components).begin_array("parameters");
    for (const auto& p : t.parameters) {
      out.begin_object().field("part", std::string_view(template_send::to_string(p.part)));
      out.field("button", static_cast<std::int64_t>(p.button)).field("name", p.name).field("field", p.field);
      out.end_object();
    }
    out.end_array().end_object();
  }
  out.end_array();
}

}  // namespace

std::string catalog_json(const catalog::Catalog& catalog) {
  JsonOut out;
  out.begin_object().field("name", catalog.name()).field("action_field", catalog.action_field());
  out.begin_array("actions");
  for (const auto& a : catalog.actions()) {
    out.begin_object().field("name", a.name).field("description", a.description);
    out.field("kind", std::string_view(catalog::to_string(a.kind)));
    out.begin_array("required");
    for (const auto& f : a.required) out.value(f);
    out.end_array().begin_array("optional");
    for (const auto& f : a.optional) out.value(f);
    out.end_array().field("text_field", a.text_field).field("requires_approval", a.policy.requires_approval);
    out.field("recipient_field", a.policy.recipient_field).end_object();
  }
  out.end_array().begin_array("fields");
  for (const auto& f : catalog.fields()) {
    const auto& schema = f.schema;
    out.begin_object().field("name", f.name).field("pointer", f.pointer);
    out.field("type", std::string_view(catalog::to_string(schema.type))).field("description", schema.description);
    if (!schema.enum_values.empty()) {
      out.begin_array("enum");
      for (const auto& v : schema.enum_values) out.raw(v);
      out.end_array();
    }
    if (schema.const_value) out.raw("const", *schema.const_value);
    out.field_if_set("min_length", schema.min_length).field_if_set("max_length", schema.max_length);
    out.field_if_set("pattern", schema.pattern).field_if_set("minimum", schema.minimum);
    out.field_if_set("maximum", schema.maximum).field("date", schema.date);
    const char* grounding = schema.grounding == catalog::Grounding::reject   ? "reject"
                            : schema.grounding == catalog::Grounding::review ? "review"
                                                                             : "none";
    out.field("grounding", std::string_view(grounding)).end_object();
  }
  out.end_array().end_object();
  return out.str();
}

std::optional<TargetReading> row_target(const store::EscalationRow& row, const TargetClock& clock) {
  const auto created = store::parse_time(row.created_at);
  if (!created) return std::nullopt;
  return read_target({*created, row.reason, row.status, row.breach_noticed_at.has_value()}, clock.targets, clock.now);
}

std::string escalations_json(const std::vector<store::EscalationRow>& rows, const std::optional<TargetClock>& clock) {
  JsonOut out;
  out.begin_array();
  for (const auto& row : rows) {
    out.begin_object();
    escalation_json(out, row);
    if (clock) {
      if (const auto t = row_target(row, *clock)) {
        out.field("due_at", store::format_time(t->due_at)).field("breached", t->breached());
        out.field("minutes_left", t->minutes_left);
      }
    }
    out.end_object();
  }
  out.end_array();
  return out.str();
}

std::string case_json(const store::EscalationCase& c, const std::optional<DeskClock>& clock, const CaseWindow* reach) {
  JsonOut out;
  out.begin_object();
  escalation_json(out, c.escalation);
  out.begin_array("conversation");
  for (const auto& m : c.conversation) {
    out.begin_object().field("message_id", m.id).field("received_at", m.received_at).field("sender", m.sender);
    out.field("text", m.text).field("outcome", store::to_sql(m.outcome)).end_object();
  }
  out.end_array().begin_array("attempts");
  for (const auto& a : c.attempts) {
    out.begin_object().field("attempt", a.attempt).field("provider", a.provider).field("model", a.model);
    out.field("raw_output", a.raw_output).field("verdict", store::to_sql(a.verdict)).raw_or_null("errors", a.errors);
    out.field("error_class", a.error_class).field("latency_ms", a.latency_ms).field("input_tokens", a.input_tokens);
    out.field("output_tokens", a.output_tokens).field("finish_reason", a.finish_reason).end_object();
  }
  out.end_array().begin_array("actions");
  for (const auto& a : c.actions) {
    out.begin_object().field("action_id", a.id).field("action", a.action).raw_or_null("arguments", a.arguments);
    out.field("recipient", a.recipient).field("body", a.body).field("status", store::to_sql(a.status));
    out.field("created_by", a.created_by).field("error", a.error).end_object();
  }
  out.end_array().begin_array("sent");
  for (const auto& a : c.sent) {
    out.begin_object().field("action_id", a.id).field("message_id", a.message_id).field("action", a.action);
    out.field("body", a.body).field("status", store::to_sql(a.status)).field("created_by", a.created_by);
    out.field("updated_at", a.updated_at).end_object();
  }
  out.end_array().begin_array("notes");
  for (const auto& n : c.notes) {
    out.begin_object().field("note_id", n.id).field("author", n.author).field("text", n.text);
    out.field("created_at", n.created_at).end_object();
  }
  out.end_array().begin_array("hand_overs");
  for (const auto& h : c.hand_overs) {
    out.begin_object()
        .field("audit_id", h.audit_id)
        .field("at", h.at)
        .field("kind", store::to_text(h.kind))
        .field("actor", h.actor);
    out.field("from", h.from)
        .field("to", h.to)
        .field("rule", store::to_text(h.rule))
        .field("note", h.note)
        .end_object();
  }
  out.end_array().begin_array("media");
  for (const auto& m : c.media) media_json(out, m);
  out.end_array();
  if (clock) out.field("takeover_in_minutes", takeover_in_minutes(c.claim, *clock));
  if (reach) reach_json(out, *reach);
  out.end_object();
  return out.str();
}

}  // namespace dispatchd::staff
