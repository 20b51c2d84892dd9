#include "store/templates.h"

#include <map>

#include "common/json_out.h"
#include "store/audit.h"
#include "store/internal/sql.h"
#include "store/internal/view_rows.h"
#include "store/transaction.h"

namespace dispatchd::store {
namespace {

constexpr std::string_view k_template_columns =
    "SELECT waba_id, template_id, name, language, status, category, parameter_format, components, parameters,"
    " updated_at FROM whatsapp_templates";

Template template_of(const Query& q) {
  Template t{q.text(0), q.text(1), q.text(2), q.text(3)};
  // A text another version wrote reads as unknown rather than failing the whole list.
  t.status = from_sql<TemplateStatus>(q.text(4)).value_or(TemplateStatus::unknown);
  t.category = from_sql<TemplateCategory>(q.text(5)).value_or(TemplateCategory::unknown);
  t.parameter_format = from_sql<ParameterFormat>(q.text(6)).value_or(ParameterFormat::positional);
  t.components = q.text(7);
  t.parameters = q.text(8);
  t.updated_at = q.text(9);
  return t;
}

bool template_same_content(const Template& a, const Template& b) {
  return a.waba_id == b.waba_id && a.template_id == b.template_id && a.status == b.status && a.category == b.category &&
         a.parameter_format == b.parameter_format && a.components == b.components && a.parameters == b.parameters;
}

using TemplateKey = std::pair<std::string, std::string>;  // name, language

Result<std::map<TemplateKey, Template>> template_rows(Database& db) {
  auto rows = list_templates(db);
  if (!rows) return std::unexpected(rows.error());
  std::map<TemplateKey, Template> out;
  for (auto& t : *rows) out.emplace(TemplateKey{t.name, t.language}, std::move(t));
  return out;
}

Result<void> template_upsert(Database& db, const Template& t, const std::string& waba_id, const std::string& at) {
  auto q = Query::prepare(db,
                          "INSERT INTO whatsapp_templates(waba_id, template_id, name, language, status, category,"
                          " parameter_format, components, parameters, updated_at)"
                          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
                          " ON CONFLICT (name, language) DO UPDATE SET waba_id = excluded.waba_id,"
                          " template_id = excluded.template_id, status = excluded.status,"
                          " category = excluded.category, parameter_format = excluded.parameter_format,"
                          " components = excluded.components, parameters = excluded.parameters,"
                          " updated_at = excluded.updated_at");
  if (!q) return std::unexpected(q.error());
  q->bind(1, waba_id).bind(2, t.template_id).bind(3, t.name).bind(4, t.language).bind(5, t.status);
  q->bind(6, t.category).bind(7, t.parameter_format).bind(8, t.components).bind(9, t.parameters).bind(10, at);
  return q->run();
}

Result<void> template_remove(Database& db, const TemplateKey& key) {
  auto q = Query::prepare(db, "DELETE FROM whatsapp_templates WHERE name = ? AND language = ?");
  if (!q) return std::unexpected(q.error());
  q->bind(1, key.first).bind(2, key.second);
  return q->run();
}

Result<void> template_audit(Database& db, AuditKind event, const std::string& detail, Time now) {
  auto appended = append_audit(db, {format_time(now), event, std::nullopt, "dispatchd", detail});
  if (!appended) return std::unexpected(appended.error());
  return {};
}

// Sets one column of the row `name`/`language` to `value` when it differs; the old value,
// or nullopt when there is no such row or nothing changed.
Result<std::optional<std::string>> template_change_column(Database& db, std::string_view column,
                                                          const std::string& name, const std::string& language,
                                                          std::string_view value, Time now) {
  auto select =
      Query::prepare(db, "SELECT " + std::string(column) + " FROM whatsapp_templates WHERE name = ? AND language = ?");
  if (!select) return std::unexpected(select.error());
  select->bind(1, name).bind(2, language);
  auto row = select->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::nullopt;
  std::string old = select->text(0);
  DISPATCHD_TRY(select->run());  // to the end, as run() finishes a statement
  if (old == value) return std::nullopt;
  auto update = Query::prepare(db, "UPDATE whatsapp_templates SET " + std::string(column) +
                                       " = ?, updated_at = ? WHERE name = ? AND language = ?");
  if (!update) return std::unexpected(update.error());
  update->bind(1, value).bind(2, format_time(now)).bind(3, name).bind(4, language);
  DISPATCHD_TRY(update->run());
  return old;
}

std::string template_change_detail(const std::string& name, const std::string& language, std::string_view from,
                                   std::string_view to, const std::string& extra) {
  JsonOut out;
  out.begin_object().field("name", name).field("language", language).field("from", from).field("to", to);
  if (!extra.empty()) out.raw("graph", extra);
  return out.end_object().str();
}

}  // namespace

Result<TemplatesReplaced> replace_templates(Database& db, const std::string& waba_id,
                                            const std::vector<Template>& templates, Time now) {
  return transaction<TemplatesReplaced>(db, [&]() -> Result<TemplatesReplaced> {
    auto before = template_rows(db);
    if (!before) return std::unexpected(before.error());
    TemplatesReplaced counts;
    const std::string at = format_time(now);
    for (const auto& t : templates) {
      Template incoming = t;
      incoming.waba_id = waba_id;
      const auto old = before->find(TemplateKey{t.name, t.language});
      if (old != before->end()) {
        const bool same = template_same_content(old->second, incoming);
        before->erase(old);
        if (same) continue;
        ++counts.changed;
      } else {
        ++counts.added;
      }
      DISPATCHD_TRY(template_upsert(db, incoming, waba_id, at));
    }
    for (const auto& [key, gone] : *before) {
      DISPATCHD_TRY(template_remove(db, key));
      ++counts.removed;
    }
    if (counts.added + counts.changed + counts.removed > 0) {
      JsonOut detail;
      detail.begin_object().field("waba", waba_id).field("added", counts.added).field("changed", counts.changed);
      detail.field("removed", counts.removed).field("templates", static_cast<std::int64_t>(templates.size()));
      DISPATCHD_TRY(template_audit(db, AuditKind::templates_refreshed, detail.end_object().str(), now));
    }
    return counts;
  });
}

Result<bool> set_template_status(Database& db, const std::string& name, const std::string& language,
                                 TemplateStatus status, const std::string& detail, Time now) {
  return transaction<bool>(db, [&]() -> Result<bool> {
    auto old = template_change_column(db, "status", name, language, to_sql(status), now);
    if (!old) return std::unexpected(old.error());
    if (!*old) return false;
    DISPATCHD_TRY(template_audit(db, AuditKind::template_status,
                                 template_change_detail(name, language, **old, to_sql(status), detail), now));
    return true;
  });
}

Result<bool> set_template_category(Database& db, const std::string& name, const std::string& language,
                                   TemplateCategory category, Time now) {
  return transaction<bool>(db, [&]() -> Result<bool> {
    auto old = template_change_column(db, "category", name, language, to_sql(category), now);
    if (!old) return std::unexpected(old.error());
    if (!*old) return false;
    DISPATCHD_TRY(template_audit(db, AuditKind::template_category,
                                 template_change_detail(name, language, **old, to_sql(category), {}), now));
    return true;
  });
}

Result<std::vector<Template>> list_templates(Database& db) {
  auto select = Query::prepare(db, std::string(k_template_columns) + " ORDER BY name, language");
  if (!select) return std::unexpected(select.error());
  return collect<Template>(*select, template_of);
}

Result<std::optional<Template>> find_template(Database& db, const std::string& name, const std::string& language) {
  auto select = Query::prepare(db, std::string(k_template_columns) + " WHERE name = ? AND language = ?");
  if (!select) return std::unexpected(select.error());
  select->bind(1, name).bind(2, language);
  auto rows = collect<Template>(*select, template_of);
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty()) return std::optional<Template>();
  return std::optional<Template>(std::move(rows->front()));
}

}  // namespace dispatchd::store
