#include "staff/trail_render.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <vector>

#include "common/json_out.h"
#include "common/markdown.h"
#include "validator/extract.h"

namespace dispatchd::staff {
namespace {

// A stored state's text, for the Markdown and the summary.
template <typename E>
std::string text(E value) {
  return std::string(store::to_sql(value));
}

constexpr const char* k_prompt_note =
    "dispatchd does not store the prompt itself. The system prompt and catalog prompt come from the configuration "
    "in force when the message was decided; the history below is the conversation before this message as the "
    "agent reads it, read now; each attempt's request summary is what the provider call carried.";
constexpr const char* k_tool_note =
    "An answer the validator took that was followed by another attempt: a read-only tool call. The tool's answer "
    "went back to the model and is not stored.";

// What the documents derive from the read model, computed once for both.
struct Facts {
  std::vector<std::vector<validator::Repair>> repairs;  // per attempt
  std::vector<bool> tool_call;                          // per attempt
  std::vector<store::EscalationReason> reasons;         // of the escalations, in order
  std::vector<std::int64_t> sent;                       // actions that reached the customer
  std::vector<const store::AuditRow*> staff_actions;
  std::string summary;
};

std::string decision_summary(const store::Trail& t, const Facts& f) {
  std::string out = text(t.message.outcome);
  if (t.message.outcome == store::Outcome::pending) out += " (state " + text(t.message.state) + ")";
  for (std::size_t i = 0; i < f.reasons.size(); ++i) out += (i ? ", " : " (") + text(f.reasons[i]);
  if (!f.reasons.empty()) out += ")";
  for (const auto& e : t.escalations) {
    out += "; escalation " + std::to_string(e.id) + " " + text(e.status);
    if (e.assignee) out += " by " + *e.assignee;
    if (e.resolution) out += " (" + *e.resolution + ")";
  }
  for (const auto& a : t.actions) {
    if (std::find(f.sent.begin(), f.sent.end(), a.row.id) == f.sent.end()) continue;
    out += "; " + a.row.action + " sent to " + a.row.recipient.value_or("?") + " by " + a.row.created_by;
  }
  return out;
}

Facts facts_of(const store::Trail& t) {
  Facts f;
  for (std::size_t i = 0; i < t.attempts.size(); ++i) {
    const auto& raw = t.attempts[i].row.raw_output;
    f.repairs.push_back(raw ? validator::extract(*raw).repairs : std::vector<validator::Repair>{});
    f.tool_call.push_back(store::accepted(t.attempts[i].row.verdict) && i + 1 < t.attempts.size());
  }
  for (const auto& e : t.escalations) f.reasons.push_back(e.reason);
  for (const auto& a : t.actions) {
    if (a.row.status == store::ActionStatus::sent) f.sent.push_back(a.row.id);
  }
  for (const auto& row : t.audit) {
    if (row.actor != "dispatchd") f.staff_actions.push_back(&row);
  }
  f.summary = decision_summary(t, f);
  return f;
}

std::optional<std::string> last_verdict(const store::Trail& t) {
  if (t.attempts.empty()) return std::nullopt;
  return text(t.attempts.back().row.verdict);
}

// ---- JSON ----

void message_json(JsonOut& out, const store::Trail& t) {
  const auto& m = t.message;
  out.begin_object("message").field("message_id", m.id).field("channel", m.channel);
  out.field("provider_message_id", m.provider_message_id).field("conversation_id", m.conversation_id);
  out.field("sender", m.sender).field("received_at", m.received_at).field("message_type", t.message_type);
  out.field("text", m.text)
      .field("state", store::to_sql(m.state))
      .field("outcome", store::to_sql(m.outcome))
      .field("cost_usd", t.cost_usd);
  out.begin_array("turn");
  for (const auto id : t.turn) out.value(id);
  out.end_array().end_object();
}

std::optional<std::string> unless_empty(const std::string& value) {
  return value.empty() ? std::nullopt : std::optional<std::string>(value);
}

// The kind, with "voice note" for a voice message's audio.
std::string media_kind(const store::MediaRow& m) { return text(m.kind) + (m.voice ? " (voice note)" : ""); }

void files_json(JsonOut& out, const store::Trail& t) {
  out.begin_array("media");
  for (const auto& m : t.media) {
    out.begin_object().field("media_id", m.id).field("position", m.position).field("kind", store::to_sql(m.kind));
    out.field("voice", m.voice).field("filename", unless_empty(m.filename)).field("state", store::to_sql(m.state));
    out.field("reason", unless_empty(m.reason)).field("declared_type", m.declared_type);
    out.field("sniffed_type", unless_empty(m.sniffed_type)).field("type_mismatch", m.type_mismatch);
    out.field("size", m.size).field("sha256", unless_empty(m.sha256));
    out.field("declared_sha256", unless_empty(m.declared_sha256)).field("attempts", m.attempts);
    out.field("created_at", m.created_at).field("fetched_at", unless_empty(m.fetched_at)).end_object();
  }
  out.end_array();
}

void context_json(JsonOut& out, const store::Trail& t) {
  out.begin_object("context").field("prompt_stored", false).field("note", std::string_view(k_prompt_note));
  out.field("history_limit", t.history_limit).begin_array("history");
  for (const auto& h : t.history) {
    out.begin_object().field("at", h.at).field("from", std::string_view(h.from_us ? "us" : "customer"));
    out.field("text", h.text).end_object();
  }
  out.end_array().end_object();
}

void attempts_json(JsonOut& out, const store::Trail& t, const Facts& f) {
  out.begin_array("attempts");
  for (std::size_t i = 0; i < t.attempts.size(); ++i) {
    const auto& a = t.attempts[i].row;
    out.begin_object().field("attempt", a.attempt).field("created_at", a.created_at).field("provider", a.provider);
    out.field("model", a.model)
        .field("request_summary", t.attempts[i].request_summary)
        .field("verdict", store::to_sql(a.verdict));
    out.field("raw_output", a.raw_output).begin_array("repairs");
    for (const auto& r : f.repairs[i])
      out.begin_object().field("code", r.code).field("message", r.message).end_object();
    out.end_array().raw_or_null("errors", a.errors).field("error_class", a.error_class);
    out.field("latency_ms", a.latency_ms).field("input_tokens", a.input_tokens);
    out.field("output_tokens", a.output_tokens).field("cached_input_tokens", a.cached_input_tokens);
    out.field("cache_write_tokens", a.cache_write_tokens).field("reasoning_tokens", a.reasoning_tokens);
    out.field("cost_usd", a.cost_usd).field("finish_reason", a.finish_reason);
    out.field("media_count", a.media_count).field("media_bytes", a.media_bytes);
    out.field("tool_call", static_cast<bool>(f.tool_call[i])).end_object();
  }
  out.end_array().begin_array("tool_calls");
  for (std::size_t i = 0; i < t.attempts.size(); ++i) {
    if (!f.tool_call[i]) continue;
    out.begin_object().field("attempt", t.attempts[i].row.attempt).field("call", t.attempts[i].row.raw_output);
    out.field("answer", nullptr).end_object();
  }
  out.end_array();
}

void decision_json(JsonOut& out, const store::Trail& t, const Facts& f) {
  out.begin_object("decision")
      .field("outcome", store::to_sql(t.message.outcome))
      .field("state", store::to_sql(t.message.state));
  out.field("last_verdict", last_verdict(t)).begin_array("escalation_reasons");
  for (const auto r : f.reasons) out.value(store::to_sql(r));
  out.end_array().begin_array("sent_actions");
  for (const auto id : f.sent) out.value(id);
  out.end_array().field("summary", f.summary).end_object();
}

void actions_json(JsonOut& out, const store::Trail& t) {
  out.begin_array("actions");
  for (const auto& a : t.actions) {
    const auto& r = a.row;
    out.begin_object().field("action_id", r.id).field("action", r.action).raw_or_null("arguments", r.arguments);
    out.field("recipient", r.recipient).field("body", r.body).field("status", store::to_sql(r.status));
    out.field("created_by", r.created_by).field("provider_message_id", r.provider_message_id).field("error", r.error);
    out.field("escalation_id", a.escalation_id).field("created_at", a.created_at).field("updated_at", r.updated_at);
    out.begin_array("deliveries");
    for (const auto& d : a.deliveries) {
      out.begin_object().field("audit_id", d.audit_id).field("at", d.at).field("status", d.reported);
      out.field("provider_message_id", d.provider_message_id).field("error", d.error).end_object();
    }
    out.end_array();
    if (const auto& p = a.pricing) {
      out.begin_object("pricing").field("category", store::to_sql(p->category)).field("billable", p->billable);
      out.field("pricing_model", store::to_sql(p->model));
      if (p->type) out.field("pricing_type", store::to_sql(*p->type));
      out.field("cost", p->cost).field("currency", p->currency).end_object();
    }
    out.end_object();
  }
  out.end_array();
}

void escalations_json(JsonOut& out, const store::Trail& t) {
  out.begin_array("escalations");
  for (const auto& e : t.escalations) {
    out.begin_object()
        .field("escalation_id", e.id)
        .field("reason", store::to_sql(e.reason))
        .raw_or_null("detail", e.detail);
    out.field("status", store::to_sql(e.status))
        .raw_or_null("proposed_action", e.proposed_action)
        .field("assignee", e.assignee);
    out.field("resolution", e.resolution).field("created_at", e.created_at).field("claimed_at", e.claimed_at);
    out.field("resolved_at", e.resolved_at).begin_array("notes");
    for (const auto& n : t.notes) {
      if (n.escalation_id != e.id) continue;
      out.begin_object().field("note_id", n.id).field("author", n.author).field("text", n.text);
      out.field("created_at", n.created_at).end_object();
    }
    out.end_array().end_object();
  }
  out.end_array();
}

void audit_row_json(JsonOut& out, const store::AuditRow& r) {
  out.begin_object().field("audit_id", r.id).field("at", r.at).field("event", r.event).field("actor", r.actor);
  out.raw_or_null("detail", r.detail).field("prev_hash", r.prev_hash).field("hash", r.hash).end_object();
}

void audit_json(JsonOut& out, const store::Trail& t, const Facts& f) {
  out.begin_array("staff_actions");
  for (const auto* row : f.staff_actions) audit_row_json(out, *row);
  out.end_array().begin_array("audit");
  for (const auto& row : t.audit) audit_row_json(out, row);
  out.end_array();
  if (!t.chain) {
    out.field("chain", nullptr);
    return;
  }
  const auto& c = *t.chain;
  const bool verified = !c.check.first_broken;
  out.begin_object("chain").field("verified", verified).field("from", c.from).field("to", c.to);
  out.field("events", c.check.events).field("first_broken", c.check.first_broken);
  out.field("reason", verified ? std::nullopt : std::optional<std::string>(c.check.reason)).end_object();
}

// ---- Markdown ----

void line(std::string& out, std::string_view text = {}) {
  out += text;
  out += '\n';
}

void code_block(std::string& out, std::string_view text, std::string_view info = {}) {
  const std::string fence = code_fence(text);
  out += fence;
  out += info;
  out += '\n';
  out += text;
  if (!text.empty() && text.back() != '\n') out += '\n';
  line(out, fence);
}

void table_row(std::string& out, const std::vector<std::string>& cells) {
  out += '|';
  for (const auto& c : cells) out += ' ' + markdown::table_cell(c) + " |";
  out += '\n';
}

void table_head(std::string& out, const std::vector<std::string>& names) {
  table_row(out, names);
  out += '|';
  for (std::size_t i = 0; i < names.size(); ++i) out += "---|";
  out += '\n';
}

std::string or_dash(const std::optional<std::string>& value) { return value ? *value : "-"; }
std::string or_dash(const std::optional<std::int64_t>& value) { return value ? std::to_string(*value) : "-"; }

// USD for people: fixed-point (never 1e-05), to a hundred-millionth of a dollar, without
// trailing zeros, whatever the locale.
std::string usd(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, 8);
  if (ec != std::errc()) return "?";
  std::string text(buffer, end);
  while (text.ends_with('0')) text.pop_back();
  if (text.ends_with('.')) text.pop_back();
  return text;
}
std::string usd_or_unknown(const std::optional<double>& value) { return value ? usd(*value) : "unknown"; }

// "billed as marketing (PMP, regular): 0.0436 USD", "not billable: service (PMP,
// free_customer_service)", or "... : no price configured".
std::string billed_as(const store::SendPricing& p) {
  std::string how = std::string(store::to_sql(p.model)) + (p.type ? ", " + std::string(store::to_sql(*p.type)) : "");
  std::string text =
      (p.billable ? "billed as " : "not billable: ") + std::string(store::to_sql(p.category)) + " (" + how + ")";
  if (!p.billable) return text;
  return text + ": " + (p.cost ? usd(*p.cost) + " " + p.currency : "no price configured");
}

void message_md(std::string& out, const store::Trail& t) {
  const auto& m = t.message;
  line(out, "# Trail of message " + std::to_string(m.id));
  line(out);
  table_head(out, {"Field", "Value"});
  table_row(out, {"Channel", m.channel});
  table_row(out, {"Provider message id", m.provider_message_id});
  table_row(out, {"Conversation", m.conversation_id});
  table_row(out, {"Sender", m.sender});
  table_row(out, {"Type", or_dash(t.message_type)});
  table_row(out, {"Received", m.received_at});
  table_row(out, {"State", text(m.state)});
  table_row(out, {"Outcome", text(m.outcome)});
  if (t.turn.size() > 1) {
    std::string ids;
    for (const auto id : t.turn) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    table_row(out, {"Turn", "messages " + ids + ", answered together by message " + std::to_string(t.turn.front()) +
                                "'s decision"});
  }
  line(out);
  line(out, "## Inbound message");
  line(out);
  code_block(out, m.text, "text");
}

void files_md(std::string& out, const store::Trail& t) {
  line(out);
  line(out, "## Files");
  line(out);
  if (t.media.empty()) return line(out, "None.");
  table_head(out,
             {"Media id", "Kind", "File name", "State", "Declared type", "Sniffed type", "Size", "sha256", "Reason"});
  for (const auto& m : t.media) {
    const std::string sniffed =
        m.sniffed_type.empty() ? "-" : m.sniffed_type + (m.type_mismatch ? " (not the declared type)" : "");
    table_row(out, {std::to_string(m.id), media_kind(m), or_dash(unless_empty(m.filename)), text(m.state),
                    or_dash(unless_empty(m.declared_type)), sniffed, or_dash(m.size), or_dash(unless_empty(m.sha256)),
                    or_dash(unless_empty(m.reason))});
  }
}

void context_md(std::string& out, const store::Trail& t) {
  line(out);
  line(out, "## Context given to the model");
  line(out);
  line(out, k_prompt_note);
  line(out);
  line(out, "History: " + std::to_string(t.history.size()) + " entr" + (t.history.size() == 1 ? "y" : "ies") +
                " (at most " + std::to_string(t.history_limit) + ").");
  if (!t.history.empty()) {
    std::string text;
    for (const auto& h : t.history) text += "[" + h.at + "] " + (h.from_us ? "us" : "customer") + ": " + h.text + "\n";
    line(out);
    code_block(out, text, "text");
  }
  line(out);
  table_head(out, {"Attempt", "Request summary"});
  for (const auto& a : t.attempts) table_row(out, {std::to_string(a.row.attempt), or_dash(a.request_summary)});
}

void attempt_md(std::string& out, const store::TrailAttempt& attempt, const std::vector<validator::Repair>& repairs,
                bool tool_call) {
  const auto& a = attempt.row;
  line(out);
  line(out, "### Attempt " + std::to_string(a.attempt) + ": " + text(a.verdict) + (tool_call ? " (tool call)" : ""));
  line(out);
  if (a.cached_input_tokens || a.cache_write_tokens || a.reasoning_tokens) {
    line(out, "Tokens: input " + or_dash(a.input_tokens) + ", cached input " + or_dash(a.cached_input_tokens) +
                  ", cache write " + or_dash(a.cache_write_tokens) + ", output " + or_dash(a.output_tokens) +
                  ", reasoning " + or_dash(a.reasoning_tokens) + "; cost " + usd_or_unknown(a.cost_usd) +
                  (a.cost_usd ? " USD." : "."));
    line(out);
  }
  if (a.raw_output) {
    line(out, "Raw output:");
    line(out);
    code_block(out, *a.raw_output);
  } else {
    line(out, "Raw output: none (the call failed).");
  }
  line(out);
  if (repairs.empty()) line(out, "Repairs: none.");
  if (!repairs.empty()) line(out, "Repairs:");
  for (const auto& r : repairs) line(out, "- " + r.code + ": " + r.message);
  line(out);
  if (a.errors == "[]") {
    line(out, "Validator errors: none.");
  } else {
    line(out, "Validator errors:");
    line(out);
    code_block(out, a.errors, "json");
  }
}

void attempts_md(std::string& out, const store::Trail& t, const Facts& f) {
  line(out);
  line(out, "## Attempts");
  line(out);
  if (t.attempts.empty()) line(out, "No attempts: the model was not asked.");
  if (!t.attempts.empty())
    table_head(out, {"#", "At", "Provider", "Model", "Verdict", "Error class", "Latency ms", "Tokens in", "Tokens out",
                     "Finish", "Cost USD"});
  for (const auto& attempt : t.attempts) {
    const auto& a = attempt.row;
    table_row(out, {std::to_string(a.attempt), a.created_at, a.provider, a.model, text(a.verdict),
                    or_dash(a.error_class), or_dash(a.latency_ms), or_dash(a.input_tokens), or_dash(a.output_tokens),
                    or_dash(a.finish_reason), usd_or_unknown(a.cost_usd)});
  }
  for (const auto& attempt : t.attempts) {
    // The customers' files the request carried (docs/media.md): only when there were some.
    const auto& a = attempt.row;
    if (a.media_count > 0)
      line(out, "Attempt " + std::to_string(a.attempt) + " carried " + std::to_string(a.media_count) +
                    (a.media_count == 1 ? " file" : " files") + " of the customer's to the model (" +
                    std::to_string(a.media_bytes) + " bytes).");
  }
  if (!t.attempts.empty()) {
    line(out);
    line(out, "Cost of the message: " + (t.cost_usd ? usd(*t.cost_usd) + " USD" : "unknown") +
                  (t.cost_usd ? "" : " (an attempt has no price: llm.prices, or a call from before costs were kept)"));
  }
  for (std::size_t i = 0; i < t.attempts.size(); ++i) attempt_md(out, t.attempts[i], f.repairs[i], f.tool_call[i]);
  line(out);
  line(out, "## Tool calls");
  line(out);
  const bool any = std::find(f.tool_call.begin(), f.tool_call.end(), true) != f.tool_call.end();
  line(out, any ? k_tool_note : "None.");
  for (std::size_t i = 0; i < t.attempts.size(); ++i) {
    if (f.tool_call[i]) line(out, "- attempt " + std::to_string(t.attempts[i].row.attempt) + ": answer not stored");
  }
}

void decision_md(std::string& out, const store::Trail& t, const Facts& f) {
  line(out);
  line(out, "## Decision");
  line(out);
  line(out, "- Outcome: " + text(t.message.outcome) + " (state " + text(t.message.state) + ")");
  line(out, "- Last verdict: " + last_verdict(t).value_or("none"));
  line(out, "- Summary: " + f.summary);
}

void actions_md(std::string& out, const store::Trail& t) {
  line(out);
  line(out, "## Outbox");
  line(out);
  if (t.actions.empty()) line(out, "No actions.");
  if (!t.actions.empty())
    table_head(
        out, {"Action", "Name", "Status", "By", "Recipient", "Provider message id", "Escalation", "Updated", "Error"});
  for (const auto& a : t.actions) {
    const auto& r = a.row;
    table_row(out, {std::to_string(r.id), r.action, text(r.status), r.created_by, or_dash(r.recipient),
                    or_dash(r.provider_message_id), or_dash(a.escalation_id), r.updated_at, or_dash(r.error)});
  }
  for (const auto& a : t.actions) {
    line(out);
    line(out, "### Action " + std::to_string(a.row.id) + ": " + a.row.action + ", " + text(a.row.status));
    line(out);
    line(out, "Arguments:");
    line(out);
    code_block(out, a.row.arguments, "json");
    if (a.row.body) {
      line(out);
      line(out, "Body sent to " + or_dash(a.row.recipient) + ":");
      line(out);
      code_block(out, *a.row.body, "text");
    }
    if (!a.deliveries.empty()) line(out);
    for (const auto& d : a.deliveries)
      line(out, "- delivery " + d.reported + " at " + d.at +
                    (d.provider_message_id ? " (" + *d.provider_message_id + ")" : "") +
                    (d.error ? ": " + markdown::table_cell(*d.error) : ""));
    if (a.pricing) line(out, "- " + billed_as(*a.pricing));
  }
}

void escalations_md(std::string& out, const store::Trail& t) {
  line(out);
  line(out, "## Escalations");
  line(out);
  if (t.escalations.empty()) line(out, "None.");
  for (const auto& e : t.escalations) {
    if (&e != &t.escalations.front()) line(out);
    line(out, "### Escalation " + std::to_string(e.id) + ": " + text(e.reason) + ", " + text(e.status));
    line(out);
    line(out, "- Opened: " + e.created_at);
    if (e.assignee) line(out, "- Held by: " + *e.assignee + (e.claimed_at ? " since " + *e.claimed_at : ""));
    if (e.resolution) line(out, "- Resolution: " + *e.resolution + " at " + e.resolved_at.value_or("-"));
    if (e.detail) line(out, "- Detail: " + markdown::table_cell(*e.detail));
    for (const auto& n : t.notes) {
      if (n.escalation_id == e.id)
        line(out, "- Note by " + n.author + " at " + n.created_at + " (internal): " + markdown::table_cell(n.text));
    }
    if (e.proposed_action) {
      line(out, "- Proposed action:");
      line(out);
      code_block(out, *e.proposed_action, "json");
    }
  }
}

void audit_table(std::string& out, const std::vector<const store::AuditRow*>& rows, bool hashes) {
  if (rows.empty()) return line(out, "None.");
  if (hashes) table_head(out, {"Audit id", "At", "Event", "Actor", "Detail", "Previous hash", "Hash"});
  if (!hashes) table_head(out, {"Audit id", "At", "Who", "Event", "Detail"});
  for (const auto* r : rows) {
    if (hashes) table_row(out, {std::to_string(r->id), r->at, r->event, r->actor, r->detail, r->prev_hash, r->hash});
    if (!hashes) table_row(out, {std::to_string(r->id), r->at, r->actor, r->event, r->detail});
  }
}

std::string chain_sentence(const store::Trail& t) {
  if (!t.chain) return "No audit events: nothing to verify.";
  const auto& c = *t.chain;
  const std::string span = "audit ids " + std::to_string(c.from) + " to " + std::to_string(c.to);
  if (!c.check.first_broken)
    return "The chain verifies across " + span + " (" + std::to_string(c.check.events) +
           " events, each hash recomputed and linked to the one before).";
  return "**The chain does NOT verify** across " + span + ": broken at audit id " +
         std::to_string(*c.check.first_broken) + ": " + c.check.reason + ".";
}

void audit_md(std::string& out, const store::Trail& t, const Facts& f) {
  line(out);
  line(out, "## Staff actions");
  line(out);
  audit_table(out, f.staff_actions, false);
  line(out);
  line(out, "## Audit events");
  line(out);
  std::vector<const store::AuditRow*> all;
  for (const auto& row : t.audit) all.push_back(&row);
  audit_table(out, all, true);
  line(out);
  line(out, chain_sentence(t));
}

}  // namespace

std::string code_fence(std::string_view text) {
  std::size_t longest = 0;
  std::size_t run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<std::size_t>(3, longest + 1), '`');
}

std::string trail_markdown(const store::Trail& trail) {
  const Facts f = facts_of(trail);
  std::string out;
  message_md(out, trail);
  files_md(out, trail);
  context_md(out, trail);
  attempts_md(out, trail, f);
  decision_md(out, trail, f);
  actions_md(out, trail);
  escalations_md(out, trail);
  audit_md(out, trail, f);
  return out;
}

std::string trail_json(const store::Trail& trail) {
  const Facts f = facts_of(trail);
  JsonOut out;
  out.begin_object();
  message_json(out, trail);
  files_json(out, trail);
  context_json(out, trail);
  attempts_json(out, trail, f);
  decision_json(out, trail, f);
  actions_json(out, trail);
  escalations_json(out, trail);
  audit_json(out, trail, f);
  return out.end_object().str();
}

}  // namespace dispatchd::staff
