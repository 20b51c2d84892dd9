#include "connectors/whatsapp/templates.h"

#include <algorithm>
#include <array>
#include <utility>

#include "common/backoff.h"
#include "common/json_access.h"
#include "common/json_out.h"
#include "common/strict_json.h"
#include "common/text.h"
#include "connectors/whatsapp/internal/json_util.h"
#include "connectors/whatsapp/internal/template_events.h"

namespace dispatchd::whatsapp {
namespace {

using json::member;
using json::string_of;
using rapidjson::Value;

constexpr std::size_t k_max_template_page_bytes = 4 * 1024 * 1024;
constexpr std::size_t k_max_template_field = 512;
constexpr std::size_t k_max_waba_id = 32;
constexpr std::string_view k_template_fields = "name,language,status,category,parameter_format,components,id";

template <typename E, std::size_t N>
std::optional<E> lookup(const std::array<std::pair<std::string_view, E>, N>& table, std::string_view key) {
  for (const auto& [name, value] : table) {
    if (name == key) return value;
  }
  return std::nullopt;
}

using store::TemplateStatus;
constexpr std::array<std::pair<std::string_view, TemplateStatus>, 10> k_graph_statuses{{
    {"APPROVED", TemplateStatus::approved},
    {"PENDING", TemplateStatus::pending},
    {"REJECTED", TemplateStatus::rejected},
    {"PAUSED", TemplateStatus::paused},
    {"DISABLED", TemplateStatus::disabled},
    {"IN_APPEAL", TemplateStatus::in_appeal},
    {"PENDING_DELETION", TemplateStatus::pending_deletion},
    {"DELETED", TemplateStatus::deleted},
    {"ARCHIVED", TemplateStatus::archived},
    {"LIMIT_EXCEEDED", TemplateStatus::limit_exceeded},
}};

constexpr std::array<std::pair<std::string_view, store::TemplateCategory>, 3> k_graph_categories{{
    {"MARKETING", store::TemplateCategory::marketing},
    {"UTILITY", store::TemplateCategory::utility},
    {"AUTHENTICATION", store::TemplateCategory::authentication},
}};

bool template_digits(std::string_view s, std::size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A string member of 1..max bytes, or the reason it is not one.
std::expected<std::string, std::string> template_string(const Value& object, const char* name) {
  const Value* value = member(object, name);
  if (value == nullptr || !value->IsString() || value->GetStringLength() == 0 ||
      value->GetStringLength() > k_max_template_field) {
    return std::unexpected(std::string("\"") + name + "\" is missing or not a string of 1.." +
                           std::to_string(k_max_template_field) + " bytes");
  }
  return std::string(string_of(value));
}

// Graph sends ids as strings in lists and as numbers in webhooks.
std::string template_id_of(const Value* value) {
  if (value == nullptr) return {};
  if (value->IsString()) return std::string(string_of(value));
  if (value->IsInt64()) return std::to_string(value->GetInt64());
  if (value->IsUint64()) return std::to_string(value->GetUint64());
  return {};
}

// A parameter's name inside {{ }}: digits, or a lower-case name (letters, digits, _).
bool parameter_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  if (template_digits(s, 64)) return true;
  if (!(s[0] >= 'a' && s[0] <= 'z') && s[0] != '_') return false;
  for (const char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

void scan_parameters(std::string_view text, std::string_view component, std::optional<int> index, JsonOut& out) {
  for (std::size_t open = text.find("{{"); open != std::string_view::npos; open = text.find("{{", open + 2)) {
    const std::size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) return;
    const std::string_view name = text.substr(open + 2, close - open - 2);
    if (!parameter_name(name)) continue;
    out.begin_object().field("component", component);
    if (index) out.field("index", *index);
    out.field("name", name).end_object();
  }
}

void component_parameters(const Value& component, JsonOut& out) {
  const std::string_view type = string_of(member(component, "type"));
  if (type == "HEADER") scan_parameters(string_of(member(component, "text")), "header", {}, out);
  if (type == "BODY") scan_parameters(string_of(member(component, "text")), "body", {}, out);
  if (type != "BUTTONS") return;
  const Value* buttons = json::array_member(component, "buttons");
  if (buttons == nullptr) return;
  for (rapidjson::SizeType i = 0; i < buttons->Size(); ++i) {
    for (const char* field : {"text", "url"})
      scan_parameters(string_of(member((*buttons)[i], field)), "button", static_cast<int>(i), out);
  }
}

TemplateFetchError template_error(ErrorClass kind, std::string message) { return {kind, std::move(message)}; }

std::expected<store::Template, std::string> template_of(const Value& item) {
  if (!item.IsObject()) return std::unexpected("not an object");
  auto name = template_string(item, "name");
  auto language = template_string(item, "language");
  auto status = template_string(item, "status");
  if (!name) return std::unexpected(name.error());
  if (!language) return std::unexpected(language.error());
  if (!status) return std::unexpected(status.error());
  store::Template out;
  out.template_id = template_id_of(member(item, "id"));
  if (out.template_id.empty()) return std::unexpected("\"id\" is missing");
  out.name = std::move(*name);
  out.language = std::move(*language);
  out.status = template_status_of(*status);
  out.category = template_category_of(string_of(member(item, "category")));
  out.parameter_format = parameter_format_of(string_of(member(item, "parameter_format")));
  const Value* components = member(item, "components");
  if (components != nullptr && !components->IsArray()) return std::unexpected("\"components\" is not an array");
  out.components = components == nullptr ? "[]" : json::to_string(*components);
  out.parameters = template_parameters(out.components);
  return out;
}

}  // namespace

std::expected<net::HttpRequest, std::string> build_template_list(const GraphAccount& account, std::string_view waba_id,
                                                                 std::string_view after) {
  std::string_view base = account.graph_base_url;
  if (!base.starts_with("https://") && !base.starts_with("http://"))
    return std::unexpected("graph_base_url is not an http(s) URL");
  while (base.ends_with('/')) base.remove_suffix(1);
  if (!template_digits(waba_id, k_max_waba_id)) return std::unexpected("waba_id is not digits");
  const std::string& token = account.access_token;
  const bool plain = std::ranges::all_of(token, [](char c) { return c > ' ' && c <= '~'; });
  if (token.empty() || token.size() > 4096 || !plain)
    return std::unexpected("access token is empty or has spaces or control characters");
  net::HttpRequest request;
  request.method = "GET";
  request.url = std::string(base) + "/" + std::string(waba_id) +
                "/message_templates?fields=" + text::percent_encode(k_template_fields) +
                "&limit=" + std::to_string(k_template_page_limit);
  if (!after.empty()) request.url += "&after=" + text::percent_encode(after);
  request.headers = {{"Authorization", "Bearer " + token}};
  return request;
}

std::expected<TemplatePage, TemplateFetchError> read_template_page(int status, std::string_view body) {
  if (status < 200 || status > 299) {
    GraphError error;
    error.http_status = status;
    std::optional<json::Parsed> parsed;
    if (auto p = json::parse_strict(body.substr(0, k_max_template_page_bytes), {}); p) parsed = std::move(*p);
    const Value* object = parsed ? json::object_member(parsed->document, "error") : nullptr;
    if (object != nullptr)
      error = detail::graph_error(*object, status);
    else
      error.message = body.empty() ? "no response body" : "response body " + text::quote(body, 60);
    return std::unexpected(template_error(classify(error), describe(error)));
  }
  if (body.size() > k_max_template_page_bytes)
    return std::unexpected(template_error(ErrorClass::permanent, "a page of templates over 4 MiB"));
  auto parsed = json::parse_strict(body, {});
  if (!parsed) return std::unexpected(template_error(ErrorClass::permanent, "not JSON: " + parsed.error().message));
  const Value& root = parsed->document;
  const Value* data = root.IsObject() ? json::array_member(root, "data") : nullptr;
  if (data == nullptr) return std::unexpected(template_error(ErrorClass::permanent, "no data[] array"));
  TemplatePage page;
  for (rapidjson::SizeType i = 0; i < data->Size(); ++i) {
    auto one = template_of((*data)[i]);
    if (one)
      page.templates.push_back(std::move(*one));
    else
      page.skipped.push_back({"/data/" + std::to_string(i), std::move(one.error())});
  }
  const Value* paging = root.IsObject() ? json::object_member(root, "paging") : nullptr;
  if (paging != nullptr && member(*paging, "next") != nullptr) {
    const std::string_view after = string_of(member(json::object_member(*paging, "cursors"), "after"));
    if (after.empty())
      return std::unexpected(template_error(ErrorClass::permanent, "paging.next without paging.cursors.after"));
    page.after = std::string(after);
  }
  return page;
}

std::string template_parameters(std::string_view components_json) {
  JsonOut out;
  out.begin_array();
  auto parsed = json::parse_strict(components_json, {});
  if (parsed && parsed->document.IsArray()) {
    for (const Value& component : parsed->document.GetArray()) {
      if (component.IsObject()) component_parameters(component, out);
    }
  }
  return out.end_array().str();
}

store::TemplateStatus template_status_of(std::string_view graph_status) {
  return lookup(k_graph_statuses, graph_status).value_or(TemplateStatus::unknown);
}

store::TemplateCategory template_category_of(std::string_view graph_category) {
  return lookup(k_graph_categories, graph_category).value_or(store::TemplateCategory::unknown);
}

store::ParameterFormat parameter_format_of(std::string_view graph_format) {
  return graph_format == "NAMED" ? store::ParameterFormat::named : store::ParameterFormat::positional;
}

std::optional<store::TemplateStatus> status_of_event(std::string_view graph_event) {
  // REINSTATED: no longer flagged or disabled, sendable again.
  if (graph_event == "REINSTATED") return TemplateStatus::approved;
  return lookup(k_graph_statuses, graph_event);
}

std::chrono::milliseconds template_refresh_delay(int failures, std::chrono::milliseconds period) {
  if (failures < 1) return period;
  return std::min(period, exponential_backoff({std::chrono::seconds(5), period}, failures));
}

namespace detail {

std::expected<TemplateEvent, std::string> read_template_change(const Value& value, std::string_view field,
                                                               std::string waba_id) {
  auto name = template_string(value, "message_template_name");
  auto language = template_string(value, "message_template_language");
  if (!name) return std::unexpected(name.error());
  if (!language) return std::unexpected(language.error());
  TemplateEvent event;
  event.waba_id = std::move(waba_id);
  event.template_id = template_id_of(member(value, "message_template_id"));
  event.name = std::move(*name);
  event.language = std::move(*language);
  if (field == k_template_status_field) {
    auto text = template_string(value, "event");
    if (!text) return std::unexpected(text.error());
    event.kind = TemplateEvent::Kind::status;
    event.event = std::move(*text);
    event.reason = string_of(member(value, "reason"));
    event.status = status_of_event(event.event);
    return event;
  }
  auto category = template_string(value, "new_category");
  if (!category) return std::unexpected(category.error());
  event.kind = TemplateEvent::Kind::category;
  event.category = template_category_of(*category);
  event.impending = member(value, "correct_category") != nullptr;
  return event;
}

}  // namespace detail
}  // namespace dispatchd::whatsapp
