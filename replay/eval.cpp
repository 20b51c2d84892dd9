#include "replay/eval.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "common/json_access.h"
#include "common/json_out.h"
#include "common/markdown.h"
#include "common/strict_json.h"
#include "replay/markdown.h"
#include "store/inbox.h"
#include "store/migrations.h"

namespace dispatchd::replay {
namespace {

constexpr std::size_t k_max_line = 1u << 20;
constexpr std::size_t k_max_set = 4u << 20;
constexpr std::size_t k_max_cases = 1000;
constexpr std::size_t k_max_text = 16u << 10;
constexpr std::size_t k_max_turns = 20;
constexpr std::size_t k_max_id = 200;
constexpr std::size_t k_max_depth = 8;
constexpr std::array<std::string_view, 8> k_keys = {"id",      "channel",         "sender",          "text",
                                                    "history", "expected_action", "expected_fields", "must_escalate"};

std::expected<std::vector<store::CaseTurn>, std::string> history_of(const rapidjson::Value& line) {
  std::vector<store::CaseTurn> out;
  const auto* history = json::member(line, "history");
  if (!history) return out;
  if (!history->IsArray()) return std::unexpected("\"history\" must be an array");
  if (history->Size() > k_max_turns) return std::unexpected("\"history\" has more than 20 turns");
  for (const auto& turn : history->GetArray()) {
    const auto from = json::string_member(turn, "from");
    const auto text = json::string_member(turn, "text");
    if (!turn.IsObject() || turn.MemberCount() != 2 || !from || !text || (*from != "customer" && *from != "agent"))
      return std::unexpected(
          "each history turn is {\"from\": \"customer\" | \"agent\", \"text\": \"...\"} and nothing else");
    if (text->size() > k_max_text) return std::unexpected("a history turn's text is longer than 16 KiB");
    if (out.empty() && *from == "agent") return std::unexpected("\"history\" must start with the customer");
    out.push_back({*from == "agent", *text});
  }
  return out;
}

std::expected<LabelledCase, std::string> case_of(const rapidjson::Value& line, int number,
                                                 std::span<const std::string_view> channels) {
  if (!line.IsObject()) return std::unexpected("a case is one JSON object");
  for (const auto& m : line.GetObject()) {
    const std::string_view key(m.name.GetString(), m.name.GetStringLength());
    if (std::ranges::find(k_keys, key) == k_keys.end())
      return std::unexpected("unknown key \"" + std::string(key) + "\"");
  }
  LabelledCase c;
  c.line = number;
  const auto id = json::member(line, "id");
  if (id && (!id->IsString() || id->GetStringLength() > k_max_id))
    return std::unexpected("\"id\" must be a string of at most 200 bytes");
  c.id = id ? std::string(json::string_of(*id)) : "line " + std::to_string(number);
  const auto channel = json::string_member(line, "channel");
  if (!channel || std::ranges::find(channels, *channel) == channels.end()) {
    std::string names;
    for (const auto name : channels) names += std::string(names.empty() ? "\"" : ", \"") + std::string(name) + "\"";
    return std::unexpected("\"channel\" must be one of " + names);
  }
  c.channel = *channel;
  const auto sender = json::string_member(line, "sender");
  const auto text = json::string_member(line, "text");
  if (!sender || sender->empty() || sender->size() > k_max_id)
    return std::unexpected("\"sender\" must be a non-empty string of at most 200 bytes");
  if (!text || text->empty() || text->size() > k_max_text)
    return std::unexpected("\"text\" must be a non-empty string of at most 16 KiB");
  c.sender = *sender;
  c.text = *text;
  auto history = history_of(line);
  if (!history) return std::unexpected(history.error());
  c.history = std::move(*history);
  if (json::member(line, "must_escalate")) {
    const auto must = json::bool_member(line, "must_escalate");
    if (!must || !*must) return std::unexpected("\"must_escalate\" can only be true");
    c.must_escalate = true;
  }
  if (const auto* action = json::member(line, "expected_action")) {
    if (!action->IsString() || action->GetStringLength() == 0)
      return std::unexpected("\"expected_action\" must be a non-empty string");
    c.expected_action = std::string(json::string_of(*action));
  }
  if (c.must_escalate == c.expected_action.has_value())
    return std::unexpected("give either \"expected_action\" or \"must_escalate\": true (one of them)");
  if (const auto* fields = json::member(line, "expected_fields")) {
    if (!c.expected_action || !fields->IsObject())
      return std::unexpected("\"expected_fields\" is an object and goes with \"expected_action\"");
    for (const auto& f : fields->GetObject()) {
      if (!f.value.IsString()) return std::unexpected("each expected field's value is a string");
      c.expected_fields.emplace_back(std::string(f.name.GetString(), f.name.GetStringLength()),
                                     std::string(json::string_of(f.value)));
    }
  }
  return c;
}

std::string field_value(const DecisionView& d, const std::string& name) {
  for (const auto& [key, value] : d.fields)
    if (key == name) return value;
  return "";
}

void score(CaseResult& r, std::vector<FieldScore>& fields) {
  const auto mark = [&](const std::string& name, bool right) {
    auto it = std::ranges::find(fields, name, &FieldScore::name);
    if (it == fields.end()) {
      fields.push_back(FieldScore{name, 0, 0});
      it = fields.end() - 1;
    }
    ++it->total;
    if (right) ++it->right;
    if (!right) r.wrong.push_back(name == "action" || name == "must_escalate" ? name : "field " + name);
  };
  const DecisionView& got = r.run.replayed;
  if (r.label.must_escalate) {
    mark("must_escalate", got.kind == store::DecisionKind::escalate);
  } else {
    // The action as the model's accepted output names it (view_of reads the action field).
    const bool accepted = !r.run.attempts.empty() && !got.fields.empty();
    mark("action", accepted && got.action == *r.label.expected_action);
    for (const auto& [name, value] : r.label.expected_fields) mark(name, accepted && field_value(got, name) == value);
  }
  r.correct = r.wrong.empty();
}

std::string percent(double share) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * share);
  return text;
}

}  // namespace

std::expected<std::vector<LabelledCase>, SetError> parse_set(std::string_view text,
                                                             std::span<const std::string_view> channels) {
  if (text.size() > k_max_set) return std::unexpected(SetError{0, "the set is larger than 4 MiB"});
  std::vector<LabelledCase> out;
  int number = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (line.size() > k_max_line) return std::unexpected(SetError{number, "the line is longer than 1 MiB"});
    if (out.size() == k_max_cases) return std::unexpected(SetError{number, "more than 1000 cases"});
    auto parsed = json::parse_strict(line, {.max_depth = k_max_depth});
    if (!parsed) return std::unexpected(SetError{number, "not JSON: " + parsed.error().message});
    auto c = case_of(parsed->document, number, channels);
    if (!c) return std::unexpected(SetError{number, c.error()});
    out.push_back(std::move(*c));
  }
  if (out.empty()) return std::unexpected(SetError{0, "the set has no case"});
  return out;
}

std::expected<EvalReport, std::string> run_eval(const std::vector<LabelledCase>& cases, const ModelOptions& options,
                                                const std::string& scratch_path, const std::string& migrations_dir,
                                                const RunHooks& hooks) {
  auto db = store::Database::open(scratch_path, store::Database::Mode::create);
  if (!db) return std::unexpected("cannot create the scratch database: " + db.error().message);
  const auto received = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  auto migrations = store::load_migrations(migrations_dir);
  if (!migrations) return std::unexpected(migrations.error().message);
  if (auto migrated = store::migrate(*db, *migrations, store::format_time(received)); !migrated)
    return std::unexpected("cannot migrate the scratch database: " + migrated.error().message);
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    auto id = store::insert_case(
        *db, {c.channel, c.sender, c.text, c.history, "eval-" + std::to_string(i + 1), store::format_time(received)});
    if (!id) return std::unexpected("cannot store case " + c.id + ": " + id.error().message);
    ids.push_back(*id);
  }
  if (auto prepared = store::prepare_scratch(*db, migrations_dir, ids); !prepared)
    return std::unexpected("cannot prepare the scratch database: " + prepared.error().message);
  auto ran = run_pending(*db, options, hooks);
  if (!ran) return std::unexpected(ran.error());
  auto run = collect(*db, options.setup->catalog, options.provider.model);
  if (!run) return std::unexpected("cannot read the run: " + run.error().message);
  EvalReport report;
  report.model = options.provider.model;
  report.partial = run->partial;
  report.summary = run->summary;
  report.fields.push_back({"action", 0, 0});
  std::size_t next = 0;  // run->messages are in case order; cases not run are missing
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CaseResult r{cases[i], {}, false, {}};
    if (next < run->messages.size() && run->messages[next].row.message_id == ids[i]) {
      r.run = std::move(run->messages[next++]);
      score(r, report.fields);
    } else {
      r.wrong.emplace_back("not run");
    }
    if (r.correct) ++report.correct;
    report.cases.push_back(std::move(r));
  }
  if (report.fields.front().total == 0) report.fields.erase(report.fields.begin());
  report.accuracy = static_cast<double>(report.correct) / static_cast<double>(cases.size());
  return report;
}

std::string eval_markdown(const EvalReport& report) {
  std::string md = report.partial ? "# Eval (partial)\n\n" : "# Eval\n\n";
  md += "- set: `" + markdown::table_cell(report.set) + "`\n- catalog: `" + markdown::table_cell(report.catalog) +
        "`\n- model: `" + markdown::table_cell(report.model) + "`\n";
  md += "\n## Summary\n\n| | value |\n|---|---:|\n";
  md += "| cases | " + std::to_string(report.cases.size()) + " |\n";
  md += "| correct | " + std::to_string(report.correct) + " |\n";
  md += "| accuracy | " + percent(report.accuracy) + " |\n";
  run_rows(md, report.summary);
  md += "\n## Per field\n\n| field | right | of | accuracy |\n|---|---:|---:|---:|\n";
  for (const auto& f : report.fields)
    md += "| " + markdown::table_cell(f.name) + " | " + std::to_string(f.right) + " | " + std::to_string(f.total) +
          " | " + percent(f.total ? static_cast<double>(f.right) / f.total : 0) + " |\n";
  md += "\n## Cases\n\n| line | id | expected | got | result |\n|---:|---|---|---|---|\n";
  for (const auto& c : report.cases) {
    std::string wrong;
    for (const auto& w : c.wrong) wrong += (wrong.empty() ? "" : ", ") + w;
    const auto& got = c.run.replayed;
    md += "| " + std::to_string(c.label.line) + " | " + markdown::table_cell(c.label.id) + " | " +
          markdown::table_cell(c.label.must_escalate ? "escalation" : *c.label.expected_action) + " | " +
          markdown::table_cell(std::string(store::to_sql(got.kind)) + (got.action.empty() ? "" : " " + got.action) +
                               (got.reason.empty() ? "" : " " + got.reason)) +
          " | " + (c.correct ? std::string("correct") : "wrong: " + markdown::table_cell(wrong)) + " |\n";
  }
  return md;
}

std::string eval_json(const EvalReport& report) {
  const RunSummary& s = report.summary;
  JsonOut out;
  out.begin_object().field("set", report.set).field("catalog", report.catalog).field("model", report.model);
  out.field("partial", report.partial).field("cases", static_cast<std::int64_t>(report.cases.size()));
  out.field("correct", report.correct).field("accuracy", report.accuracy);
  out.field("valid_first_attempt", s.valid_first).field("reasked", s.reasked).field("escalated", s.escalated);
  out.field("attempts", s.attempts).field("input_tokens", s.input_tokens).field("output_tokens", s.output_tokens);
  out.field("cost", s.cost).begin_array("fields");
  for (const auto& f : report.fields)
    out.begin_object().field("field", f.name).field("right", f.right).field("total", f.total).end_object();
  out.end_array().begin_array("results");
  for (const auto& c : report.cases) {
    out.begin_object().field("line", c.label.line).field("id", c.label.id).field("correct", c.correct);
    out.field("kind", store::to_sql(c.run.replayed.kind)).field("action", c.run.replayed.action);
    out.field("reason", c.run.replayed.reason).begin_array("wrong");
    for (const auto& w : c.wrong) out.value(w);
    out.end_array().field("attempts", static_cast<std::int64_t>(c.run.attempts.size())).end_object();
  }
  return out.end_array().end_object().str();
}

}  // namespace dispatchd::replay
