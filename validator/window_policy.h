#pragma once
// The reply-window rule of the policy stage (validator.h, stage 4), pure: while a channel's
// reply window for the counterpart is closed (common/reply_window.h), only a template
// reaches them, so a reply that would send free-form text is refused with the template
// actions the model may choose instead. The re-ask follows as for any policy error; a
// model that keeps choosing free-form text ends in a policy_violation escalation. With no
// template action in the catalog, the finding says none can reach the customer (an
// escalate or ignore action is then all that passes).

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "common/reply_window.h"
#include "validator/validator.h"

namespace dispatchd::validator {

// The refusal for a reply whose action `action` sends free-form text (`free_form`) to a
// counterpart whose window is `window` (nullopt: the channel has none); nullopt when it may
// go. The finding's path is `path` (the action field), its code "window_closed".
std::optional<Finding> window_refusal(const std::optional<ReplyWindow>& window, bool free_form, std::string_view action,
                                      std::span<const std::string> template_actions, const std::string& path);

// The catalog's actions of kind template, in catalog order.
std::vector<std::string> template_actions(const catalog::Catalog& catalog);

}  // namespace dispatchd::validator
