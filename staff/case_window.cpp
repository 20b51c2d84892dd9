#include "staff/case_window.h"

namespace dispatchd::staff {

store::Result<std::optional<ReplyWindow>> reply_window_of(store::Database& db, WindowRule rule,
                                                          const std::string& channel, const std::string& sender,
                                                          store::Time now) {
  if (!rule) return std::optional<ReplyWindow>{};
  auto last = store::last_inbound_at(db, channel, sender);
  if (!last) return std::unexpected(std::move(last.error()));
  return std::optional<ReplyWindow>{rule(*last, now)};
}

store::Result<CaseWindow> case_window(store::Database& db, const catalog::Catalog* catalog, WindowRule rule,
                                      const std::string& channel, const std::string& sender, store::Time now) {
  CaseWindow out;
  auto window = reply_window_of(db, rule, channel, sender, now);
  if (!window) return std::unexpected(std::move(window.error()));
  out.window = *window;
  if (!out.window || !catalog) return out;
  for (const auto& action : catalog->actions()) {
    if (!action.template_message) continue;
    const auto& wanted = *action.template_message;
    TemplateOffer offer{.action = action.name,
                        .name = wanted.name,
                        .language = wanted.language,
                        .status = std::nullopt,
                        .category = std::nullopt,
                        .components = "[]",
                        .parameters = wanted.parameters};
    auto stored = store::find_template(db, wanted.name, wanted.language);
    if (!stored) return std::unexpected(std::move(stored.error()));
    if (*stored) {
      offer.status = (*stored)->status;
      offer.category = (*stored)->category;
      offer.components = (*stored)->components;
    }
    out.templates.push_back(std::move(offer));
  }
  return out;
}

}  // namespace dispatchd::staff
