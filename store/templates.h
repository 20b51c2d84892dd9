#pragma once
// WhatsApp message templates (migration 0030, view v_templates; docs/channels.md,
// "Templates"): the business's templates as the Graph API lists them, kept so that staff and
// later the agent know which templates exist, with which parameters, and whether WhatsApp
// accepts them now. The store keeps rows; reading Graph and webhooks is the WhatsApp
// connector's (connectors/whatsapp/templates.h), which hands over parsed values.
//
//   replace_templates     a full refresh: the given set becomes the table (upsert by name and
//                         language; rows Graph no longer lists are deleted); one
//                         templates_refreshed audit event when anything changed
//   set_template_status   a message_template_status_update webhook: the row changes at once,
//   set_template_category a template_category_update webhook      with an audit event
//                         (template_status | template_category) in the same transaction
//
// Every write takes `now`; none reads a clock. Threading: as the Database (one thread).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/states.h"

namespace dispatchd::store {

// Whether WhatsApp accepts the template now (v_templates.status). Only `approved` may be
// sent. `unknown`: a status this version does not know (kept, never treated as approved).
enum class TemplateStatus {
  approved,
  pending,
  rejected,
  paused,
  disabled,
  in_appeal,
  pending_deletion,
  deleted,
  archived,
  limit_exceeded,
  unknown,
};

// What WhatsApp bills the template as (v_templates.category).
enum class TemplateCategory { marketing, utility, authentication, unknown };

// How the template's parameters are written: {{1}} or {{name}} (v_templates.parameter_format).
enum class ParameterFormat { positional, named };

template <>
struct SqlNames<TemplateStatus> {
  static constexpr std::array<std::pair<TemplateStatus, std::string_view>, 11> table{{
      {TemplateStatus::approved, "approved"},
      {TemplateStatus::pending, "pending"},
      {TemplateStatus::rejected, "rejected"},
      {TemplateStatus::paused, "paused"},
      {TemplateStatus::disabled, "disabled"},
      {TemplateStatus::in_appeal, "in_appeal"},
      {TemplateStatus::pending_deletion, "pending_deletion"},
      {TemplateStatus::deleted, "deleted"},
      {TemplateStatus::archived, "archived"},
      {TemplateStatus::limit_exceeded, "limit_exceeded"},
      {TemplateStatus::unknown, "unknown"},
  }};
};

template <>
struct SqlNames<TemplateCategory> {
  static constexpr std::array<std::pair<TemplateCategory, std::string_view>, 4> table{{
      {TemplateCategory::marketing, "marketing"},
      {TemplateCategory::utility, "utility"},
      {TemplateCategory::authentication, "authentication"},
      {TemplateCategory::unknown, "unknown"},
  }};
};

template <>
struct SqlNames<ParameterFormat> {
  static constexpr std::array<std::pair<ParameterFormat, std::string_view>, 2> table{{
      {ParameterFormat::positional, "positional"},
      {ParameterFormat::named, "named"},
  }};
};

struct Template {
  std::string waba_id;      // the WhatsApp Business Account it belongs to
  std::string template_id;  // Graph's id
  std::string name;
  std::string language;  // e.g. "en_US"
  TemplateStatus status = TemplateStatus::unknown;
  TemplateCategory category = TemplateCategory::unknown;
  ParameterFormat parameter_format = ParameterFormat::positional;
  std::string components;  // compact JSON array, as Graph gave it
  std::string parameters;  // compact JSON array of {"component","index"?,"name"} (migration 0030)
  std::string updated_at;  // set by the store on write; ignored on input
};

struct TemplatesReplaced {
  std::int64_t added = 0;
  std::int64_t changed = 0;  // rows whose content differed
  std::int64_t removed = 0;  // rows Graph no longer lists
};

// Makes `templates` the whole table in one transaction (see the header comment). REQUIRES:
// no two with the same name and language (the caller keeps the first).
[[nodiscard]] Result<TemplatesReplaced> replace_templates(Database& db, const std::string& waba_id,
                                                          const std::vector<Template>& templates, Time now);

// Sets the status of the template `name`/`language`; false (nothing written) when no row
// has them or it already has that status. `detail` goes into the audit event as given
// (Graph's event and reason, e.g. {"event":"PAUSED","reason":"NONE"}: compact JSON object
// text, or "" for none).
[[nodiscard]] Result<bool> set_template_status(Database& db, const std::string& name, const std::string& language,
                                               TemplateStatus status, const std::string& detail, Time now);

// Sets the category, as set_template_status does the status.
[[nodiscard]] Result<bool> set_template_category(Database& db, const std::string& name, const std::string& language,
                                                 TemplateCategory category, Time now);

// Every template, by name then language.
[[nodiscard]] Result<std::vector<Template>> list_templates(Database& db);

// The template `name` in `language`; nullopt when none is stored.
[[nodiscard]] Result<std::optional<Template>> find_template(Database& db, const std::string& name,
                                                            const std::string& language);

}  // namespace dispatchd::store
