// dispatchctl templates list [--json]: the WhatsApp message templates dispatchd keeps
// (store/templates.h, v_templates), with the parameters each component takes. Read-only.
// Exit 0 listed, 2 usage or an unreadable database.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/target.h"
#include "common/json_access.h"
#include "common/json_out.h"
#include "common/strict_json.h"
#include "store/templates.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_templates_usage = "usage: dispatchctl [--config FILE | --db FILE] templates list [--json]";

// "header {{1}}; body {{1}} {{2}}; button 0 {{1}}" from the stored parameters array.
std::string parameters_text(const std::string& parameters_json) {
  auto parsed = json::parse_strict(parameters_json, {});
  if (!parsed || !parsed->document.IsArray()) return "?";
  std::string out;
  std::string last_part;
  for (const auto& p : parsed->document.GetArray()) {
    std::string part(json::string_of(json::member(p, "component")));
    if (const auto index = json::int_member(p, "index")) part += " " + std::to_string(*index);
    if (part != last_part) out += (out.empty() ? "" : "; ") + part;
    out += " {{" + std::string(json::string_of(json::member(p, "name"))) + "}}";
    last_part = std::move(part);
  }
  return out.empty() ? "-" : out;
}

std::string templates_json(const std::vector<store::Template>& templates) {
  JsonOut out;
  out.begin_array();
  for (const auto& t : templates) {
    out.begin_object().field("name", t.name).field("language", t.language).field("status", store::to_sql(t.status));
    out.field("category", store::to_sql(t.category)).field("parameter_format", store::to_sql(t.parameter_format));
    out.raw("parameters", t.parameters).raw("components", t.components);
    out.field("template_id", t.template_id).field("waba_id", t.waba_id).field("updated_at", t.updated_at);
    out.end_object();
  }
  return out.end_array().str();
}

}  // namespace

int cmd_templates(int argc, char** argv) {
  auto specs = target_options();
  specs.push_back({"json", false});
  auto args = parse_args(argc, argv, 2, specs);
  if (!args) return usage_error(args.error());
  if (args->positional.size() != 1 || args->positional[0] != "list") return usage_error(k_templates_usage);
  auto target = open_target(*args);
  if (!target) return usage_error(target.error());
  auto templates = store::list_templates(target->db);
  if (!templates) return usage_error(templates.error().message);
  if (args->has("json")) {
    std::printf("%s\n", templates_json(*templates).c_str());
    return k_exit_ok;
  }
  for (const auto& t : *templates) {
    std::printf("%s\t%s\t%s\t%s\t%s\t%s\n", t.name.c_str(), t.language.c_str(),
                std::string(store::to_sql(t.status)).c_str(), std::string(store::to_sql(t.category)).c_str(),
                std::string(store::to_sql(t.parameter_format)).c_str(), parameters_text(t.parameters).c_str());
  }
  if (templates->empty())
    std::printf("(no templates; dispatchd lists them from Graph when connectors.whatsapp.waba_id is set)\n");
  return k_exit_ok;
}

}  // namespace dispatchd::cli
