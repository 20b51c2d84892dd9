#include "validator/window_policy.h"

#include "common/text.h"

namespace dispatchd::validator {

std::optional<Finding> window_refusal(const std::optional<ReplyWindow>& window, bool free_form, std::string_view action,
                                      std::span<const std::string> template_actions, const std::string& path) {
  if (!window || window->open || !free_form) return std::nullopt;
  std::string message = "the customer's reply window is closed: action " + text::quote(action) +
                        " sends free-form text, which cannot reach them now; ";
  if (template_actions.empty()) {
    message += "no template action in the catalog can reach them either: choose an escalate action";
  } else {
    message += "only a template action can: choose ";
    for (std::size_t i = 0; i < template_actions.size(); ++i) {
      if (i > 0) message += i + 1 == template_actions.size() ? " or " : ", ";
      message += text::quote(template_actions[i]);
    }
  }
  return Finding{path, "window_closed", std::move(message)};
}

std::vector<std::string> template_actions(const catalog::Catalog& catalog) {
  std::vector<std::string> names;
  for (const auto& action : catalog.actions())
    if (action.kind == catalog::ActionKind::template_message) names.push_back(action.name);
  return names;
}

}  // namespace dispatchd::validator
