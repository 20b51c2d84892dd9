// The online replay report, as Markdown for people and as JSON for programs (the same
// content); the formats are a contract (tests/replay/online_test.cpp, docs/cli.md).
#include <algorithm>
#include <cstdio>
#include <string>

#include "common/json_out.h"
#include "common/markdown.h"
#include "replay/markdown.h"
#include "replay/online.h"

namespace dispatchd::replay {
namespace {

std::string or_dash(const std::string& text) { return text.empty() ? "-" : markdown::table_cell(text); }

std::string rate(std::int64_t n, std::int64_t of) {
  if (of == 0) return std::to_string(n);
  char text[32];
  std::snprintf(text, sizeof text, " (%.1f%%)", 100.0 * static_cast<double>(n) / static_cast<double>(of));
  return std::to_string(n) + text;
}

std::string ms(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : "-"; }

// "reply send_message to 15551234567", "escalate model_escalated (escalate_to_human)".
std::string brief(const DecisionView& d) {
  const bool escalate = d.kind == store::DecisionKind::escalate;
  std::string out(store::to_sql(d.kind));
  if (escalate) out += " " + d.reason;
  if (!d.action.empty()) out += escalate ? " (" + d.action + ")" : " " + d.action;
  if (!d.recipient.empty()) out += " to " + d.recipient;
  return markdown::table_cell(out);
}

std::string field_of(const DecisionView& d, const std::string& name) {
  for (const auto& [key, value] : d.fields)
    if (key == name) return value;
  return "";
}

void change_section(std::string& md, const MessageResult& m) {
  md += "\n### message " + std::to_string(m.row.message_id) + " (" + markdown::table_cell(m.row.provider_message_id) +
        ")\n\n";
  md += "- channel: " + markdown::table_cell(m.row.channel) + "; received_at: " + m.row.received_at + "\n";
  std::string what;
  for (const auto& c : m.changes) what += (what.empty() ? "" : ", ") + c;
  md += "- changed: " + markdown::table_cell(what) + "\n\n| | recorded | replayed |\n|---|---|---|\n";
  md += "| decision | " + or_dash(std::string(store::to_sql(m.recorded.kind))) + " | " +
        or_dash(std::string(store::to_sql(m.replayed.kind))) + " |\n";
  md += "| action | " + or_dash(m.recorded.action) + " | " + or_dash(m.replayed.action) + " |\n";
  md += "| recipient | " + or_dash(m.recorded.recipient) + " | " + or_dash(m.replayed.recipient) + " |\n";
  md += "| escalation reason | " + or_dash(m.recorded.reason) + " | " + or_dash(m.replayed.reason) + " |\n";
  std::vector<std::string> names;
  for (const auto* d : {&m.recorded, &m.replayed})
    for (const auto& field : d->fields)
      if (std::ranges::find(names, field.first) == names.end()) names.push_back(field.first);
  for (const auto& name : names)
    md += "| field " + markdown::table_cell(name) + " | " + or_dash(field_of(m.recorded, name)) + " | " +
          or_dash(field_of(m.replayed, name)) + " |\n";
}

void decision_json(JsonOut& out, std::string_view key, const DecisionView& d) {
  out.begin_object(key).field("kind", store::to_sql(d.kind)).field("action", d.action).field("recipient", d.recipient);
  out.field("reason", d.reason).begin_object("fields");
  for (const auto& [name, value] : d.fields) out.field(name, value);
  out.end_object().end_object();
}

}  // namespace

void run_rows(std::string& md, const RunSummary& s) {
  md += "| valid on the first attempt | " + rate(s.valid_first, s.decided) + " |\n";
  md += "| re-asked | " + rate(s.reasked, s.decided) + " |\n";
  md += "| escalated | " + rate(s.escalated, s.decided) + " |\n";
  md += "| attempts | " + std::to_string(s.attempts) + " |\n";
  md += "| input tokens | " + std::to_string(s.input_tokens) + " |\n";
  md += "| output tokens | " + std::to_string(s.output_tokens) + " |\n";
  char cost[32] = "-";
  if (s.cost) std::snprintf(cost, sizeof cost, "%.4f", *s.cost);
  md += "| cost | " + std::string(cost) + " |\n";
  md += "| latency p50 / p90 / p99 (ms) | " + ms(s.p50) + " / " + ms(s.p90) + " / " + ms(s.p99) + " |\n";
}

std::string to_markdown(const OnlineReport& report) {
  const RunSummary& s = report.summary;
  std::string md = report.partial ? "# Online replay (partial)\n\n" : "# Online replay\n\n";
  md += "- catalog: `" + markdown::table_cell(report.catalog) + "`\n- model: `" + markdown::table_cell(report.model) +
        "`\n";
  md += "- scratch database: `" + markdown::table_cell(report.scratch) + "`\n";
  md += report.partial ? "- status: partial: " + std::to_string(s.pending) + " of " + std::to_string(s.chosen) +
                             " messages not replayed yet (run the same command again to continue)\n"
                       : "- status: complete\n";
  md += "\n## Summary\n\n| | value |\n|---|---:|\n";
  md += "| messages chosen | " + std::to_string(s.chosen) + " |\n";
  md += "| messages replayed | " + std::to_string(s.decided) + " |\n";
  md += "| failed | " + std::to_string(s.failed) + " |\n";
  md += "| not replayed yet | " + std::to_string(s.pending) + " |\n";
  md += "| changed decisions | " + rate(s.changed, s.decided) + " |\n";
  run_rows(md, s);
  md += "\n## Changed decisions (" + std::to_string(s.changed) + ")\n";
  if (s.changed == 0) md += "\nNone.\n";
  for (const auto& m : report.messages)
    if (m.row.status == store::ProgressStatus::decided && !m.changes.empty()) change_section(md, m);
  md +=
      "\n## Messages\n\n| message_id | provider id | channel | received_at | status | recorded | replayed | attempts "
      "|\n|---:|---|---|---|---|---|---|---:|\n";
  for (const auto& m : report.messages) {
    md += "| " + std::to_string(m.row.message_id) + " | " + markdown::table_cell(m.row.provider_message_id) + " | " +
          markdown::table_cell(m.row.channel) + " | " + m.row.received_at + " | " +
          (m.row.status == store::ProgressStatus::failed ? "failed: " + markdown::table_cell(m.row.detail)
           : m.changes.empty()                           ? std::string("unchanged")
                                                         : std::string("changed")) +
          " | " + brief(m.recorded) + " | " + brief(m.replayed) + " | " + std::to_string(m.attempts.size()) + " |\n";
  }
  return md;
}

std::string to_json(const OnlineReport& report) {
  const RunSummary& s = report.summary;
  JsonOut out;
  out.begin_object().field("mode", "online").field("catalog", report.catalog).field("model", report.model);
  out.field("scratch", report.scratch).field("partial", report.partial).begin_object("summary");
  out.field("chosen", s.chosen).field("replayed", s.decided).field("failed", s.failed).field("pending", s.pending);
  out.field("valid_first_attempt", s.valid_first).field("reasked", s.reasked).field("escalated", s.escalated);
  out.field("changed", s.changed).field("attempts", s.attempts).field("input_tokens", s.input_tokens);
  out.field("output_tokens", s.output_tokens).field("cost", s.cost);
  out.field("latency_p50_ms", s.p50).field("latency_p90_ms", s.p90).field("latency_p99_ms", s.p99).end_object();
  out.begin_array("messages");
  for (const auto& m : report.messages) {
    out.begin_object().field("message_id", m.row.message_id).field("provider_message_id", m.row.provider_message_id);
    out.field("channel", m.row.channel).field("received_at", m.row.received_at);
    out.field("status", store::to_sql(m.row.status)).field("detail", m.row.detail);
    decision_json(out, "recorded", m.recorded);
    decision_json(out, "replayed", m.replayed);
    out.begin_array("changes");
    for (const auto& c : m.changes) out.value(c);
    out.end_array().begin_array("attempts");
    for (const auto& a : m.attempts) {
      out.begin_object().field("attempt", a.attempt).field("verdict", store::to_sql(a.verdict));
      out.field("latency_ms", a.latency_ms).field("input_tokens", a.input_tokens);
      out.field("output_tokens", a.output_tokens).end_object();
    }
    out.end_array().end_object();
  }
  return out.end_array().end_object().str();
}

}  // namespace dispatchd::replay
