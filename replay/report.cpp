// The offline replay report, as Markdown for people and as JSON for programs. Both carry
// the same content; the formats are a contract (tests/replay, docs/cli.md).
#include <string>

#include "common/json_out.h"
#include "common/markdown.h"
#include "replay/markdown.h"
#include "replay/offline.h"

namespace dispatchd::replay {

namespace {

std::string findings_cell(const std::vector<validator::Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    if (!out.empty()) out += "; ";
    out += (f.path.empty() ? std::string("(reply)") : f.path) + " " + f.code + ": " + f.message;
  }
  return out.empty() ? "-" : markdown::table_cell(out);
}

std::string or_all(const std::optional<std::string>& since) { return since ? *since : "any date"; }
std::string or_none(const std::optional<std::int64_t>& n) { return n ? std::to_string(*n) : "none"; }

void counts_row(std::string& md, std::string_view name, const Counts& c) {
  md += "| " + std::string(name) + " | " + std::to_string(c.checked) + " | " + std::to_string(c.unchanged) + " | " +
        std::to_string(c.valid_to_refused) + " | " + std::to_string(c.refused_to_valid) + " |\n";
}

void changes_section(std::string& md, const Report& report, Flip flip, std::string_view title, std::int64_t count) {
  md += "\n### " + std::string(title) + " (" + std::to_string(count) + ")\n\n";
  if (count == 0) {
    md += "None.\n";
    return;
  }
  const bool refused = flip == Flip::valid_to_refused;
  md += "| message_id | provider id | channel | received_at | attempt | action | recorded | ";
  md += refused ? "new errors |\n" : "recorded errors | new review flags |\n";
  md += refused ? "|---:|---|---|---|---:|---|---|---|\n" : "|---:|---|---|---|---:|---|---|---|---|\n";
  for (const auto& c : report.changes) {
    if (c.flip != flip) continue;
    md += "| " + std::to_string(c.message_id) + " | " + markdown::table_cell(c.provider_message_id) + " | " +
          markdown::table_cell(c.channel) + " | " + c.received_at + " | " + std::to_string(c.attempt) + " | " +
          (c.action.empty() ? "-" : markdown::table_cell(c.action)) + " | " + c.recorded_verdict + " | ";
    md += refused ? findings_cell(c.errors) + " |\n"
                  : findings_cell(c.recorded_errors) + " | " + findings_cell(c.review) + " |\n";
  }
}

void findings_json(JsonOut& out, std::string_view key, const std::vector<validator::Finding>& findings) {
  out.begin_array(key);
  for (const auto& f : findings)
    out.begin_object().field("path", f.path).field("code", f.code).field("message", f.message).end_object();
  out.end_array();
}

void counts_json(JsonOut& out, const Counts& c) {
  out.field("checked", c.checked).field("unchanged", c.unchanged);
  out.field("valid_to_refused", c.valid_to_refused).field("refused_to_valid", c.refused_to_valid);
}

}  // namespace

std::string to_markdown(const Report& report) {
  const Summary& s = report.summary;
  std::string md = "# Offline replay\n\n";
  md += "- catalog: `" + markdown::table_cell(report.catalog) + "`\n";
  md += "- messages received since: " + or_all(report.selection.since) + " (UTC)\n";
  md += "- limit: " + or_none(report.selection.limit) + "; sample: " + or_none(report.selection.sample);
  if (report.selection.sample) md += " (seed " + std::to_string(report.selection.seed) + ")";
  md += "\n\n## Summary\n\n| | count |\n|---|---:|\n";
  md += "| messages replayed | " + std::to_string(s.messages) + " |\n";
  md += "| attempts recorded | " + std::to_string(s.attempts) + " |\n";
  md += "| attempts checked | " + std::to_string(s.total.checked) + " |\n";
  md += "| not checked (no validator verdict) | " + std::to_string(s.not_checked) + " |\n";
  md += "| unchanged | " + std::to_string(s.total.unchanged) + " |\n";
  md += "| valid → refused | " + std::to_string(s.total.valid_to_refused) + " |\n";
  md += "| refused → valid | " + std::to_string(s.total.refused_to_valid) + " |\n";
  md += "\n## Per action\n\n| action | checked | unchanged | valid → refused | refused → valid |\n";
  md += "|---|---:|---:|---:|---:|\n";
  for (const auto& [name, counts] : s.per_action)
    counts_row(md, name.empty() ? "(none)" : markdown::table_cell(name), counts);
  md += "\n## Changes\n";
  changes_section(md, report, Flip::valid_to_refused, "valid → refused", s.total.valid_to_refused);
  changes_section(md, report, Flip::refused_to_valid, "refused → valid", s.total.refused_to_valid);
  return md;
}

std::string to_json(const Report& report) {
  const Summary& s = report.summary;
  JsonOut out;
  out.begin_object().field("mode", "offline").field("catalog", report.catalog);
  out.begin_object("selection").field("since", report.selection.since).field("limit", report.selection.limit);
  out.field("sample", report.selection.sample).field("seed", report.selection.seed).end_object();
  out.begin_object("summary").field("messages", s.messages).field("attempts", s.attempts);
  out.field("not_checked", s.not_checked);
  counts_json(out, s.total);
  out.begin_array("per_action");
  for (const auto& [name, counts] : s.per_action) {
    out.begin_object().field("action", name);
    counts_json(out, counts);
    out.end_object();
  }
  out.end_array().end_object().begin_array("changes");
  for (const auto& c : report.changes) {
    out.begin_object().field("message_id", c.message_id).field("provider_message_id", c.provider_message_id);
    out.field("channel", c.channel).field("received_at", c.received_at).field("attempt", c.attempt);
    out.field("action", c.action).field("change", to_string(c.flip)).field("recorded_verdict", c.recorded_verdict);
    findings_json(out, "errors", c.errors);
    findings_json(out, "recorded_errors", c.recorded_errors);
    findings_json(out, "review", c.review);
    out.end_object();
  }
  return out.end_array().end_object().str();
}

}  // namespace dispatchd::replay
