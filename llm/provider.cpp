#include "llm/provider.h"

#include "catalog/catalog.h"
#include "catalog/render.h"
#include "common/strict_json.h"

namespace dispatchd::llm {

std::shared_ptr<const OutputSchema> output_schema(const catalog::Catalog& catalog) {
  auto schema = std::make_shared<OutputSchema>();
  schema->name = "dispatchd_action";  // the name render_openai_response_format uses
  schema->description = "Reply with exactly one action from the catalog. " + catalog.description();
  schema->json_schema = json::minify(catalog::render_json_schema(catalog));
  schema->openai_response_format = json::minify(catalog::render_openai_response_format(catalog));
  schema->gemini_schema = json::minify(catalog::render_gemini_schema(catalog));
  return schema;
}

std::string_view to_string(ErrorClass error_class) {
  switch (error_class) {
    case ErrorClass::transport: return "transport";
    case ErrorClass::rate_limited: return "rate_limited";
    case ErrorClass::server: return "server";
    case ErrorClass::truncated: return "truncated";
    case ErrorClass::bad_response: return "bad_response";
    case ErrorClass::blocked: return "blocked";
    case ErrorClass::refused: return "refused";
    case ErrorClass::no_text: return "no_text";
    case ErrorClass::circuit_open: return "circuit_open";
    case ErrorClass::client: break;
  }
  return "client";
}

bool is_retryable(ErrorClass error_class) {
  return error_class == ErrorClass::transport || error_class == ErrorClass::rate_limited ||
         error_class == ErrorClass::server;
}

}  // namespace dispatchd::llm
