#include <algorithm>
#include <cctype>

#include "common/strict_json.h"
#include "common/text.h"
#include "validator/checks.h"
#include "validator/window_policy.h"

namespace dispatchd::validator {
namespace {

using json::Value;

bool is_phone_like(std::string_view s, std::string& digits) {
  digits.clear();
  for (const char c : s) {
    if (c >= '0' && c <= '9')
      digits += c;
    else if (c != '+' && c != ' ' && c != '-' && c != '.' && c != '(' && c != ')')
      return false;
  }
  return digits.size() >= 6;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Whether the reply sends text of our own to the counterpart: a reply, or an mcp act's
// reply after the tool, when its text field is set.
bool sends_free_form(const catalog::Action& action, const json::Object& object) {
  const bool act = action.kind == catalog::ActionKind::mcp && action.mcp && action.mcp->use == catalog::McpUse::act;
  if ((action.kind != catalog::ActionKind::reply && !act) || !action.text_field) return false;
  const Value* text = object.find(*action.text_field);
  return text != nullptr && !text->is_null();
}

// The text a grounded value must appear as: strings as written, integers in decimal.
std::string grounded_text(const Value& v) { return v.is_string() ? std::string(v.text) : json::to_string(v); }

}  // namespace

bool same_counterpart(std::string_view a, std::string_view b) {
  if (a == b) return true;
  std::string da, db;
  if (is_phone_like(a, da) && is_phone_like(b, db)) return da == db;
  const bool emails = a.find('@') != std::string_view::npos && b.find('@') != std::string_view::npos;
  return emails && iequals(a, b);
}

void check_policy(const catalog::Catalog& catalog, const catalog::Action& action, const json::Object& object,
                  const Context& context, std::vector<Finding>& errors, std::vector<Finding>& review) {
  if (const auto& field = action.policy.recipient_field) {
    const std::string& path = catalog.find_field(*field)->pointer;
    // Present: the contract passed, and the catalog makes the recipient a required string.
    const Value* value = object.find(*field);
    const std::string_view recipient = value ? value->text : std::string_view();
    if (!context.sender) {
      review.push_back(
          {path, "recipient_unchecked", "no conversation sender was given, so the recipient was not checked"});
    } else if (!same_counterpart(recipient, *context.sender)) {
      errors.push_back({path, "recipient",
                        text::quote(recipient) + " is not this conversation's counterpart; action \"" + action.name +
                            "\" may only address " + text::quote(*context.sender) + ", the customer who wrote"});
    }
  }
  for (const auto& field : catalog.fields()) {
    if (field.schema.grounding == catalog::Grounding::none || !action.uses(field.name)) continue;
    const Value* value = object.find(field.name);
    if (!value || value->is_null()) continue;
    const std::string& path = field.pointer;
    if (!context.source) {
      review.push_back({path, "grounding_unchecked", "no source message was given, so grounding was not checked"});
      continue;
    }
    const std::string grounded = grounded_text(*value);
    if (context.source->find(grounded) != std::string::npos) continue;
    Finding finding{path, "ungrounded",
                    text::quote(grounded) + " does not appear in the customer's message; copy \"" + field.name +
                        "\" exactly as it is written there"};
    (field.schema.grounding == catalog::Grounding::review ? review : errors).push_back(std::move(finding));
  }
  const auto templates = template_actions(catalog);
  if (auto closed = window_refusal(context.window, sends_free_form(action, object), action.name, templates,
                                   catalog.action_pointer())) {
    errors.push_back(std::move(*closed));
  }
  if (action.policy.requires_approval) {
    review.push_back({catalog.action_pointer(), "requires_approval",
                      "action \"" + action.name + "\" runs only after a person approves it"});
  }
}

}  // namespace dispatchd::validator
