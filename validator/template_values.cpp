// A template action's parameter values against what WhatsApp refuses in a template's text
// (common/template_send.h): refused here, at the contract stage, so the model is re-asked
// with the reason instead of the send failing at Graph.
#include <set>

#include "common/template_send.h"
#include "common/text.h"
#include "validator/checks.h"

namespace dispatchd::validator {

void check_template_values(const catalog::Catalog& catalog, const catalog::Action& action, const json::Object& object,
                           std::vector<Finding>& out) {
  if (!action.template_message) return;
  std::set<std::string_view> reported;  // a field filling two parameters is one finding
  for (const auto& p : action.template_message->parameters) {
    // Media links and button values are not template text; the field's schema bounds them.
    if (p.part == catalog::TemplatePart::button || template_send::is_media(p.name)) continue;
    const json::Value* value = object.find(p.field);
    const catalog::Field* field = catalog.find_field(p.field);
    if (value == nullptr || !value->is_string() || field == nullptr || reported.contains(p.field)) continue;
    const auto problem = template_send::text_parameter_problem(value->text);
    if (!problem) continue;
    reported.insert(p.field);
    out.push_back({field->pointer, "template_text",
                   text::quote(p.field) + " fills the template's " + template_send::to_string(p.part) +
                       " parameter {{" + p.name + "}} and " + *problem +
                       ": WhatsApp refuses line breaks, tabs and more than 4 spaces in a row there; write it on one "
                       "line"});
  }
}

}  // namespace dispatchd::validator
