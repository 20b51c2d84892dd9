#include "common/interactive.h"
#include "common/utf8.h"
#include "validator/checks.h"

namespace dispatchd::validator {

void check_choices(catalog::FieldType type, const json::Value& value, const std::string& path,
                   std::vector<Finding>& out) {
  const auto kind = type == catalog::FieldType::buttons ? interactive::Kind::buttons : interactive::Kind::list;
  // The reader keeps nested values as their raw text; it checked that they are JSON.
  auto choices = interactive::read(kind, value.raw);
  if (choices) return;
  for (auto& problem : choices.error()) {
    out.push_back({path + problem.pointer, interactive::to_string(problem.kind), std::move(problem.message)});
  }
}

void check_choices_text(const catalog::Catalog& catalog, const catalog::Action& action, const json::Object& object,
                        std::vector<Finding>& out) {
  if (!action.interactive_field || !action.text_field) return;
  const json::Value* choices = object.find(*action.interactive_field);
  const json::Value* text = object.find(*action.text_field);
  const catalog::Field* field = catalog.find_field(*action.interactive_field);
  if (!choices || choices->is_null() || !text || !text->is_string() || !field) return;
  const auto kind =
      field->schema.type == catalog::FieldType::buttons ? interactive::Kind::buttons : interactive::Kind::list;
  const std::size_t max = interactive::max_body(kind);
  if (text->text.size() <= max) return;  // bytes never undercount code points
  if (const std::size_t points = utf8::code_points(text->text); points > max) {
    out.push_back({catalog.find_field(*action.text_field)->pointer, "max_length",
                   std::to_string(points) + " characters; at most " + std::to_string(max) + " allowed with " +
                       (kind == interactive::Kind::buttons ? "reply buttons" : "a list")});
  }
}

}  // namespace dispatchd::validator
