#pragma once
// Whether staff can reach the customer of a case with free-form text now, and with which
// templates otherwise: the channel's reply window for the escalated message's sender, and the
// catalog's template actions with the template each sends as stored (its status and its
// components), so that the desk offers the approved ones while the window is closed. The
// decisions (staff/decisions.h) apply the same window.
//
// Read-only and channel-neutral: the window comes from the channel's WindowRule
// (common/reply_window.h), the templates from the store. Any connection, any thread (the
// staff API reads it on its read thread).

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/reply_window.h"
#include "store/database.h"
#include "store/inbox.h"
#include "store/templates.h"

namespace dispatchd::staff {

// A template action of the catalog and the template it sends.
struct TemplateOffer {
  std::string action;  // the catalog action staff choose to send it
  std::string name;    // the template's name and language, as the catalog names them
  std::string language;
  // As stored; nullopt when the channel does not list the template (it cannot be sent).
  std::optional<store::TemplateStatus> status;
  std::optional<store::TemplateCategory> category;
  std::string components;  // the stored template's components (compact JSON array); "[]" when not stored
  std::vector<catalog::TemplateParameter> parameters;  // the field that fills each parameter

  bool approved() const { return status == store::TemplateStatus::approved; }
};

struct CaseWindow {
  std::optional<ReplyWindow> window;     // nullopt: the channel has no reply window
  std::vector<TemplateOffer> templates;  // the catalog's template actions; none when there is no window
};

// The reply window of `sender` on `channel` at `now` under `rule` (null: no window), and,
// when there is one and `catalog` is given, its template actions in catalog order.
[[nodiscard]] store::Result<CaseWindow> case_window(store::Database& db, const catalog::Catalog* catalog,
                                                    WindowRule rule, const std::string& channel,
                                                    const std::string& sender, store::Time now);

// The window alone, for a decision: nullopt when the channel has none.
[[nodiscard]] store::Result<std::optional<ReplyWindow>> reply_window_of(store::Database& db, WindowRule rule,
                                                                        const std::string& channel,
                                                                        const std::string& sender, store::Time now);

}  // namespace dispatchd::staff
