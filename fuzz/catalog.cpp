// Fuzz target: the catalog reader (Catalog::parse, what load_file runs on the file's text),
// then what `dispatchctl catalog lint` and the prompt do with an accepted catalog: the
// examples checked by the validator, the JSON Schemas and the prompt rendered.
// Invariants: a refusal names its problems; an accepted catalog finds each of its actions
// and fields by name, and its rendered schemas are strict JSON.

#include <string>

#include "catalog/catalog.h"
#include "catalog/render.h"
#include "common/strict_json.h"
#include "fuzz/fuzz.h"
#include "validator/lint.h"

namespace {

using namespace dispatchd;

constexpr const char* k_target = "catalog";

void require_json(const std::string& text, const char* what) {
  const auto parsed = json::parse_strict(text, json::ParseLimits{.max_depth = 64});
  fuzz::require(parsed.has_value(), k_target, what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parsed = catalog::Catalog::parse(fuzz::text(data, size), "fuzz.json");
  if (!parsed) {
    fuzz::require(!parsed.error().empty(), k_target, "a refusal without a problem");
    return 0;
  }
  const catalog::Catalog& catalog = *parsed;
  fuzz::require(!catalog.actions().empty(), k_target, "a catalog without actions accepted");
  for (const auto& action : catalog.actions())
    fuzz::require(catalog.find_action(action.name) == &action, k_target, "an action not found by its name");
  for (const auto& field : catalog.fields())
    fuzz::require(catalog.find_field(field.name) == &field, k_target, "a field not found by its name");
  const auto problems = validator::lint_examples(catalog);
  for (const auto& problem : problems) fuzz::require(!problem.message.empty(), k_target, "a lint problem without text");
  require_json(catalog::render_json_schema(catalog), "the JSON Schema is not strict JSON");
  require_json(catalog::render_openai_response_format(catalog), "the OpenAI response format is not strict JSON");
  require_json(catalog::render_gemini_schema(catalog), "the Gemini schema is not strict JSON");
  fuzz::require(!catalog::render_prompt(catalog).empty(), k_target, "an empty prompt");
  return 0;
}
