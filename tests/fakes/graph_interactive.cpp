#include "tests/fakes/graph_interactive.h"

#include <initializer_list>
#include <set>

#include "common/json_access.h"
#include "common/strict_json.h"
#include "common/utf8.h"

namespace dispatchd::fakes {
namespace {

using rapidjson::Value;

// Exactly these members (the optional ones may be missing).
bool exact(const Value* v, std::initializer_list<const char*> required, std::initializer_list<const char*> optional) {
  if (v == nullptr || !v->IsObject()) return false;
  std::size_t known = 0;
  for (const char* key : required) {
    if (!v->HasMember(key)) return false;
    ++known;
  }
  for (const char* key : optional) known += v->HasMember(key) ? 1 : 0;
  return v->MemberCount() == known;
}

bool text(const Value* v, std::size_t min, std::size_t max) {
  if (v == nullptr || !v->IsString()) return false;
  const std::size_t n = utf8::code_points(json::string_of(*v));
  return n >= min && n <= max;
}

std::optional<std::string> buttons(const Value& action, std::set<std::string>& ids) {
  if (!exact(&action, {"buttons"}, {})) return "action must hold only buttons";
  const Value* list = json::array_member(action, "buttons");
  if (list == nullptr || list->Empty() || list->Size() > 3) return "1 to 3 buttons";
  for (const Value& b : list->GetArray()) {
    if (!exact(&b, {"type", "reply"}, {}) || json::string_of(json::member(b, "type")) != "reply")
      return "a button is {type: reply, reply}";
    const Value* reply = json::member(b, "reply");
    if (!exact(reply, {"id", "title"}, {})) return "a reply is {id, title}";
    if (!text(json::member(*reply, "id"), 1, 256)) return "a button id is 1 to 256 characters";
    if (!text(json::member(*reply, "title"), 1, 20)) return "a button title is 1 to 20 characters";
    if (!ids.insert(std::string(json::string_of(json::member(*reply, "id")))).second) return "button ids repeat";
  }
  return std::nullopt;
}

std::optional<std::string> list(const Value& action, std::set<std::string>& ids) {
  if (!exact(&action, {"button", "sections"}, {})) return "action must hold button and sections";
  if (!text(json::member(action, "button"), 1, 20)) return "the list button is 1 to 20 characters";
  const Value* sections = json::array_member(action, "sections");
  if (sections == nullptr || sections->Empty() || sections->Size() > 10) return "1 to 10 sections";
  std::size_t rows = 0;
  for (const Value& s : sections->GetArray()) {
    if (!exact(&s, {"title", "rows"}, {}) || !text(json::member(s, "title"), 1, 24))
      return "a section is {title (1 to 24 characters), rows}";
    const Value* items = json::array_member(s, "rows");
    if (items == nullptr || items->Empty()) return "a section has rows";
    for (const Value& r : items->GetArray()) {
      if (!exact(&r, {"id", "title"}, {"description"})) return "a row is {id, title, description?}";
      if (!text(json::member(r, "id"), 1, 200)) return "a row id is 1 to 200 characters";
      if (!text(json::member(r, "title"), 1, 24)) return "a row title is 1 to 24 characters";
      if (r.HasMember("description") && !text(json::member(r, "description"), 0, 72))
        return "a row description is at most 72 characters";
      if (!ids.insert(std::string(json::string_of(json::member(r, "id")))).second) return "row ids repeat";
      ++rows;
    }
  }
  if (rows > 10) return "at most 10 rows in all sections";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> interactive_problem(std::string_view body) {
  auto parsed = json::parse_strict(body, {});
  if (!parsed) return "not JSON";
  const Value& doc = parsed->document;
  if (!exact(&doc, {"messaging_product", "recipient_type", "to", "type", "interactive"}, {"biz_opaque_callback_data"}))
    return "the message members are messaging_product, recipient_type, to, type, interactive";
  const Value* interactive = json::member(doc, "interactive");
  if (!exact(interactive, {"type", "body", "action"}, {})) return "interactive is {type, body, action}";
  const std::string_view type = json::string_of(json::member(*interactive, "type"));
  const Value* body_object = json::member(*interactive, "body");
  if (!exact(body_object, {"text"}, {})) return "body is {text}";
  if (!text(json::member(*body_object, "text"), 1, type == "list" ? 4096 : 1024))
    return "body.text is too long or empty";
  std::set<std::string> ids;
  const Value& action = *json::member(*interactive, "action");
  if (type == "button") return buttons(action, ids);
  if (type == "list") return list(action, ids);
  return "interactive.type is button or list";
}

}  // namespace dispatchd::fakes
