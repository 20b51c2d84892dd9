// dispatchctl catalog lint|schema: check a catalog file and render its contract. With a
// database (--config or --db), lint also checks the template actions against the templates
// it keeps (connectors/whatsapp/template_message.h).
#include <cstdio>
#include <string>

#include "catalog/catalog.h"
#include "catalog/render.h"
#include "cli/args.h"
#include "cli/target.h"
#include "connectors/whatsapp/template_message.h"
#include "store/templates.h"
#include "validator/lint.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_catalog_usage =
    "usage: dispatchctl [--config FILE | --db FILE] catalog lint --catalog FILE\n"
    "       dispatchctl catalog schema --catalog FILE [--dialect D]";

// The template actions' problems against the stored templates, as the file's problems.
std::expected<std::vector<catalog::Problem>, std::string> template_problems(const Args& args,
                                                                            const catalog::Catalog& catalog) {
  if (!args.get("config") && !args.get("db")) return std::vector<catalog::Problem>{};
  auto target = open_target(args);
  if (!target) return std::unexpected(target.error());
  auto stored = store::list_templates(target->db);
  if (!stored) return std::unexpected(stored.error().message);
  std::vector<catalog::Problem> out;
  for (auto& problem : whatsapp::check_template_actions(catalog, *stored))
    out.push_back({catalog.origin(), "", std::move(problem)});
  return out;
}

int lint(const Args& args, const std::string& path) {
  auto catalog = catalog::Catalog::load_file(path);
  std::vector<catalog::Problem> problems = catalog ? validator::lint_examples(*catalog) : catalog.error();
  if (catalog) {
    auto templates = template_problems(args, *catalog);
    if (!templates) return usage_error(templates.error());
    problems.insert(problems.end(), templates->begin(), templates->end());
  }
  for (const auto& p : problems) std::printf("%s\n", p.to_string().c_str());
  if (!problems.empty()) {
    std::fprintf(stderr, "dispatchctl: %s: %zu problem%s\n", path.c_str(), problems.size(),
                 problems.size() == 1 ? "" : "s");
    return k_exit_rejected;
  }
  std::size_t examples = 0;
  for (const auto& action : catalog->actions()) examples += action.examples.size();
  std::printf("%s: ok (%zu actions, %zu fields, %zu examples)\n", path.c_str(), catalog->actions().size(),
              catalog->fields().size(), examples);
  return k_exit_ok;
}

int schema(const std::string& path, const std::string& dialect_name) {
  const auto dialect = catalog::parse_dialect(dialect_name);
  if (!dialect) return usage_error("--dialect is jsonschema, openai, gemini or prompt, not " + dialect_name);
  auto catalog = catalog::Catalog::load_file(path);
  if (!catalog) return usage_error("bad catalog: " + catalog.error().front().to_string());
  std::fputs(catalog::render(*catalog, *dialect).c_str(), stdout);
  return k_exit_ok;
}

}  // namespace

int cmd_catalog(int argc, char** argv) {
  auto specs = target_options();
  specs.push_back({"dialect", true});
  auto args = parse_args(argc, argv, 2, specs);
  if (!args) return usage_error(args.error());
  if (args->positional.size() != 1) return usage_error(k_catalog_usage);
  const auto path = args->get("catalog");
  if (!path) return usage_error("catalog needs --catalog FILE");
  const std::string& verb = args->positional.front();
  if (verb == "lint") return lint(*args, *path);
  if (verb == "schema") return schema(*path, args->get("dialect").value_or("jsonschema"));
  return usage_error("unknown catalog command " + verb + " (lint, schema)");
}

}  // namespace dispatchd::cli
