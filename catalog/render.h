#pragma once
// Renders a catalog's output contract for the model: as JSON Schema in each provider's
// dialect, and as prompt text. Pure functions of the catalog; output is deterministic.

#include <optional>
#include <string>
#include <string_view>

#include "catalog/catalog.h"

namespace dispatchd::catalog {

enum class Dialect { jsonschema, openai, gemini, prompt };

// "jsonschema", "openai", "gemini" or "prompt"; nullopt for anything else.
std::optional<Dialect> parse_dialect(std::string_view name);

// JSON Schema (2020-12) of the reply object, strict-mode friendly: additionalProperties
// false, every property required, properties not required by every action nullable.
std::string render_json_schema(const Catalog& catalog);

// OpenAI's `response_format` value: {"type":"json_schema","json_schema":{"name",
// "strict":true,"schema"}}. Keywords strict mode does not enforce (lengths) move into
// descriptions; the validator still checks them.
std::string render_openai_response_format(const Catalog& catalog);

// Gemini's `responseSchema` (OpenAPI 3.0 subset, upper-case types, `nullable`,
// `propertyOrdering` with the action field first). Constraints the dialect lacks move
// into descriptions.
std::string render_gemini_schema(const Catalog& catalog);

struct PromptOptions {
  // The provider enforces the schema natively: leave out the field-by-field contract but
  // still list every enumerated value, which models follow better when they read them.
  bool schema_enforced = false;
};

// The contract as instructions for the model: the task, every field with its allowed
// values, every action, the exact format line, and the good and bad examples.
std::string render_prompt(const Catalog& catalog, const PromptOptions& options = {});

// The one-line format reminder used in prompts and re-ask feedback, e.g.
// {"accion": "enviar_mensaje"|"escalar_humano", "contenido": string, ...}
std::string render_contract_line(const Catalog& catalog);

// A buttons or list field's value (FieldType::buttons, list) in words: its JSON shape and
// Meta's limits (common/interactive.h); "" for the other types. For the prompt and for the
// schema descriptions of the dialects that cannot say it all with keywords.
std::string choices_shape(FieldType type);
std::string choices_rules(FieldType type);

// Dispatches on `dialect` (prompt uses default options).
std::string render(const Catalog& catalog, Dialect dialect);

}  // namespace dispatchd::catalog
