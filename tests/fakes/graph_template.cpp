#include "tests/fakes/graph_template.h"

#include <regex>
#include <set>

#include "common/json_access.h"
#include "common/strict_json.h"

namespace dispatchd::fakes {
namespace {

using Value = rapidjson::Value;

std::string text_of(const Value* value) { return value && value->IsString() ? value->GetString() : ""; }

// The distinct {{...}} of the served template's BODY text.
std::size_t body_parameters(const Value& served) {
  const Value* components = json::array_member(served, "components");
  if (components == nullptr) return 0;
  for (const auto& c : components->GetArray()) {
    if (text_of(json::member(c, "type")) != "BODY") continue;
    const std::string text = text_of(json::member(c, "text"));
    static const std::regex k_param(R"(\{\{([a-z0-9_]+)\}\})");
    std::set<std::string> names;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), k_param); it != std::sregex_iterator(); ++it)
      names.insert((*it)[1]);
    return names.size();
  }
  return 0;
}

std::optional<std::string> parameter_problem(const Value& p, bool named) {
  const std::string type = text_of(json::member(p, "type"));
  if (type == "text") {
    if (text_of(json::member(p, "text")).empty()) return "a text parameter needs its text";
    if (named && text_of(json::member(p, "parameter_name")).empty())
      return "a NAMED template's parameter needs parameter_name";
    return std::nullopt;
  }
  if (type == "image" || type == "video" || type == "document") {
    if (text_of(json::member(json::member(p, type), "link")).empty()) return "a media parameter needs its link";
    return std::nullopt;
  }
  if (type == "payload" || type == "coupon_code") {
    if (text_of(json::member(p, type)).empty()) return "a " + type + " parameter needs its value";
    return std::nullopt;
  }
  return "unknown parameter type " + type;
}

}  // namespace

std::optional<TemplateProblem> template_problem(std::string_view body, const std::vector<std::string>& templates) {
  auto parsed = json::parse_strict(body, {});
  if (!parsed || !parsed->document.IsObject()) return TemplateProblem{100, "the body is not a JSON object"};
  const Value* tpl = json::object_member(parsed->document, "template");
  if (tpl == nullptr) return TemplateProblem{100, "template is required"};
  const std::string name = text_of(json::member(tpl, "name"));
  const std::string language = text_of(json::member(json::member(tpl, "language"), "code"));
  const Value* served = nullptr;
  std::vector<json::Parsed> kept;
  kept.reserve(templates.size());  // `served` points into it
  for (const auto& t : templates) {
    auto one = json::parse_strict(t, {});
    if (!one || !one->document.IsObject()) continue;
    kept.push_back(std::move(*one));
    const Value& doc = kept.back().document;
    if (text_of(json::member(doc, "name")) == name && text_of(json::member(doc, "language")) == language) served = &doc;
  }
  if (served == nullptr) return TemplateProblem{132001, "template name (" + name + ") does not exist in " + language};
  const bool named = text_of(json::member(*served, "parameter_format")) == "NAMED";
  std::size_t body_count = 0;
  if (const Value* components = json::member(tpl, "components")) {
    if (!components->IsArray()) return TemplateProblem{100, "components must be an array"};
    for (const auto& c : components->GetArray()) {
      const std::string type = text_of(json::member(c, "type"));
      const Value* parameters = json::array_member(c, "parameters");
      if (type != "header" && type != "body" && type != "button")
        return TemplateProblem{100, "unknown component type " + type};
      if (parameters == nullptr || parameters->Empty())
        return TemplateProblem{100, type + " component needs parameters"};
      if (type == "button") {
        static const std::regex k_index("[0-9]+");
        const std::string sub = text_of(json::member(c, "sub_type"));
        if (sub != "url" && sub != "quick_reply" && sub != "copy_code")
          return TemplateProblem{100, "unknown button sub_type " + sub};
        if (!std::regex_match(text_of(json::member(c, "index")), k_index))
          return TemplateProblem{100, "a button's index is a string of digits"};
      }
      for (const auto& p : parameters->GetArray()) {
        if (auto why = parameter_problem(p, named && type != "button")) return TemplateProblem{100, *why};
        // Graph's own words for a header or body text it will not send.
        static const std::regex k_refused_text(R"([\r\n\t]| {5})");
        if (type != "button" && std::regex_search(text_of(json::member(p, "text")), k_refused_text))
          return TemplateProblem{132018,
                                 "Param text cannot have new-line/tab characters or more than 4 consecutive spaces"};
      }
      if (type == "body") body_count += parameters->Size();
    }
  }
  const std::size_t expected = body_parameters(*served);
  if (body_count != expected)
    return TemplateProblem{132000, "number of parameters (" + std::to_string(body_count) +
                                       ") does not match the expected number of params (" + std::to_string(expected) +
                                       ")"};
  return std::nullopt;
}

}  // namespace dispatchd::fakes
