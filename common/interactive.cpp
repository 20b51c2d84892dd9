#include "common/interactive.h"

#include <algorithm>
#include <set>

#include "common/json_access.h"
#include "common/json_out.h"
#include "common/strict_json.h"
#include "common/text.h"
#include "common/utf8.h"

namespace dispatchd::interactive {
namespace {

using rapidjson::Value;

// Walks one value, collecting every problem; each check_* returns what it could read.
class Reader {
 public:
  std::vector<Problem> problems;

  void problem(std::string at, ProblemKind kind, std::string message) {
    problems.push_back({std::move(at), kind, std::move(message)});
  }

  // An object with exactly `allowed` members, those in `required` present.
  bool check_members(const Value& v, const std::string& at, std::initializer_list<std::string_view> allowed,
                     std::initializer_list<std::string_view> required) {
    if (!v.IsObject()) {
      problem(at, ProblemKind::type, "expected an object");
      return false;
    }
    for (const auto& m : v.GetObject()) {
      const std::string_view key = json::string_of(m.name);
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        problem(at + "/" + text::pointer_token(key), ProblemKind::additional_property,
                text::quote(key) + " is not allowed here");
    }
    for (const auto key : required) {
      if (json::member(v, key) == nullptr) problem(at, ProblemKind::required, "missing \"" + std::string(key) + "\"");
    }
    return true;
  }

  // A string member of 1..max code points; nullopt when absent. An `optional` one may be
  // empty or null (strict schema modes make the model write every member, null for none).
  std::optional<std::string> text_member(const Value& object, std::string_view key, const std::string& at,
                                         std::size_t max, bool optional = false) {
    const Value* v = json::member(object, key);
    if (v == nullptr || (optional && v->IsNull())) return std::nullopt;
    const std::string here = at + "/" + std::string(key);
    if (!v->IsString()) {
      problem(here, ProblemKind::type, "expected a string");
      return std::nullopt;
    }
    std::string s(json::string_of(*v));
    const std::size_t points = utf8::code_points(s);
    if (points == 0 && !optional) problem(here, ProblemKind::min_length, "empty; at least 1 character required");
    if (points > max)
      problem(here, ProblemKind::max_length,
              std::to_string(points) + " characters; at most " + std::to_string(max) + " allowed");
    return s;
  }

  void unique(std::set<std::string>& seen, const std::optional<std::string>& value, const std::string& at,
              const char* what) {
    if (value && !value->empty() && !seen.insert(*value).second)
      problem(at, ProblemKind::duplicate, std::string(what) + " " + text::quote(*value) + " is used twice");
  }

  // An array of 1..max items.
  bool check_items(const Value* v, const std::string& at, std::size_t max, const char* what) {
    if (v == nullptr) return false;
    if (!v->IsArray()) {
      problem(at, ProblemKind::type, std::string("expected an array of ") + what);
      return false;
    }
    if (v->Empty()) problem(at, ProblemKind::min_items, std::string("no ") + what + "; at least 1 required");
    if (v->Size() > max)
      problem(at, ProblemKind::max_items,
              std::to_string(v->Size()) + " " + what + "; at most " + std::to_string(max) + " allowed");
    return true;
  }

  std::vector<Button> buttons(const Value& v) {
    std::vector<Button> out;
    if (!check_items(&v, "", k_max_buttons, "buttons")) return out;
    std::set<std::string> ids, titles;
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      const std::string at = "/" + std::to_string(i);
      if (!check_members(v[i], at, {"id", "title"}, {"id", "title"})) continue;
      auto id = text_member(v[i], "id", at, k_max_button_id);
      auto title = text_member(v[i], "title", at, k_max_button_title);
      unique(ids, id, at + "/id", "id");
      unique(titles, title, at + "/title", "title");
      out.push_back({id.value_or(""), title.value_or("")});
    }
    return out;
  }

  void list(const Value& v, Choices& out) {
    if (!check_members(v, "", {"button", "sections"}, {"button", "sections"})) return;
    out.list_button = text_member(v, "button", "", k_max_list_button).value_or("");
    const Value* sections = json::member(v, "sections");
    if (!check_items(sections, "/sections", k_max_sections, "sections")) return;
    std::set<std::string> ids;
    std::size_t rows = 0;
    for (rapidjson::SizeType i = 0; i < sections->Size(); ++i) {
      const std::string at = "/sections/" + std::to_string(i);
      const Value& section = (*sections)[i];
      if (!check_members(section, at, {"title", "rows"}, {"title", "rows"})) continue;
      Section s{text_member(section, "title", at, k_max_section_title).value_or(""), {}};
      const Value* items = json::member(section, "rows");
      // The row limit is for all sections together: counted below, reported once.
      if (check_items(items, at + "/rows", static_cast<std::size_t>(-1), "rows")) {
        for (rapidjson::SizeType r = 0; r < items->Size(); ++r) {
          const std::string row_at = at + "/rows/" + std::to_string(r);
          if (!check_members((*items)[r], row_at, {"id", "title", "description"}, {"id", "title"})) continue;
          auto id = text_member((*items)[r], "id", row_at, k_max_row_id);
          unique(ids, id, row_at + "/id", "id");
          auto title = text_member((*items)[r], "title", row_at, k_max_row_title);
          auto description = text_member((*items)[r], "description", row_at, k_max_row_description, true);
          s.rows.push_back({id.value_or(""), title.value_or(""), std::move(description)});
        }
        rows += items->Size();
      }
      out.sections.push_back(std::move(s));
    }
    if (rows > k_max_rows)
      problem("/sections", ProblemKind::max_items,
              std::to_string(rows) + " rows in all sections; at most " + std::to_string(k_max_rows) + " allowed");
  }
};

std::expected<Choices, std::vector<Problem>> read_value(Kind kind, const Value& v) {
  Reader reader;
  Choices out{kind, {}, {}, {}};
  if (kind == Kind::buttons)
    out.buttons = reader.buttons(v);
  else
    reader.list(v, out);
  if (!reader.problems.empty()) return std::unexpected(std::move(reader.problems));
  return out;
}

void write_buttons(JsonOut& out, const std::vector<Button>& buttons) {
  out.begin_array("buttons");
  for (const auto& b : buttons) out.begin_object().field("id", b.id).field("title", b.title).end_object();
  out.end_array();
}

void write_sections(JsonOut& out, const std::vector<Section>& sections) {
  out.begin_array("sections");
  for (const auto& s : sections) {
    out.begin_object().field("title", s.title).begin_array("rows");
    for (const auto& r : s.rows) {
      out.begin_object().field("id", r.id).field("title", r.title).field_if_set("description", r.description);
      out.end_object();
    }
    out.end_array().end_object();
  }
  out.end_array();
}

}  // namespace

std::expected<Choices, std::vector<Problem>> read(Kind kind, std::string_view json) {
  auto parsed = json::parse_strict(json, json::k_checked_json_limits);
  if (!parsed) return std::unexpected(std::vector<Problem>{{"", ProblemKind::type, "not valid JSON"}});
  return read_value(kind, parsed->document);
}

std::string to_json(const Choices& choices) {
  JsonOut out;
  out.begin_object();
  if (choices.kind == Kind::buttons) {
    out.field("type", "button");
    write_buttons(out, choices.buttons);
  } else {
    out.field("type", "list").field("button", choices.list_button);
    write_sections(out, choices.sections);
  }
  return out.end_object().str();
}

std::expected<Choices, std::string> parse_stored(std::string_view json) {
  auto parsed = json::parse_strict(json, json::k_checked_json_limits);
  if (!parsed || !parsed->document.IsObject()) return std::unexpected("the stored choices are not a JSON object");
  Value& doc = parsed->document;
  const std::string type(json::string_of(json::member(doc, "type")));
  if (type != "button" && type != "list") return std::unexpected("the stored choices have no known type");
  doc.RemoveMember("type");
  const Kind kind = type == "button" ? Kind::buttons : Kind::list;
  const Value* buttons = json::member(doc, "buttons");
  auto choices = read_value(kind, kind == Kind::buttons && buttons != nullptr ? *buttons : doc);
  if (!choices) return std::unexpected("the stored choices break a rule: " + choices.error().front().message);
  return std::move(*choices);
}

std::string as_text(std::string_view body, const Choices& choices) {
  std::string out(body);
  out += "\n";
  std::size_t n = 0;
  const auto line = [&](const std::string& title, const std::optional<std::string>& description) {
    out += "\n" + std::to_string(++n) + ". " + title;
    if (description && !description->empty()) out += " - " + *description;
  };
  for (const auto& b : choices.buttons) line(b.title, std::nullopt);
  for (const auto& s : choices.sections) {
    if (choices.sections.size() > 1) out += "\n" + s.title;
    for (const auto& r : s.rows) line(r.title, r.description);
  }
  return out;
}

std::size_t max_body(Kind kind) { return kind == Kind::buttons ? k_max_buttons_body : k_max_list_body; }

const char* to_string(ProblemKind kind) {
  switch (kind) {
    case ProblemKind::type: return "type";
    case ProblemKind::required: return "required";
    case ProblemKind::additional_property: return "additional_property";
    case ProblemKind::min_length: return "min_length";
    case ProblemKind::max_length: return "max_length";
    case ProblemKind::min_items: return "min_items";
    case ProblemKind::max_items: return "max_items";
    case ProblemKind::duplicate: return "duplicate";
  }
  return "type";
}

}  // namespace dispatchd::interactive
