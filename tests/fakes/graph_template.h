#pragma once
// The fake Graph API's check of a template message (type "template") against the templates
// it serves, as Graph answers it: written here on its own (not with dispatchd's
// connectors/whatsapp/template_message.h) so that a payload dispatchd builds wrong fails
// the e2e tests rather than agreeing with itself. Shape: Meta's "Template messages"
// request reference.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dispatchd::fakes {

struct TemplateProblem {
  int code = 100;  // 132001 unknown template, 132000 parameter count, 132018 a text WhatsApp refuses,
                   // 100 a malformed object
  std::string details;
};

// What is wrong with the request body `body` given `templates` (each as Graph lists it), or
// nullopt: template.name and template.language.code name a served template; each component
// is {"type":"header"|"body"|"button", "parameters":[...]} (a button also "sub_type" and
// "index" as a string of digits); a text parameter is {"type":"text","text":non-empty} (and
// "parameter_name" in a NAMED template; in a header or body, no line break, tab or more than
// 4 spaces in a row), media {"type":"image"|"video"|"document",
// <type>:{"link"}}; the body's parameters are as many as the template's body has.
std::optional<TemplateProblem> template_problem(std::string_view body, const std::vector<std::string>& templates);

}  // namespace dispatchd::fakes
