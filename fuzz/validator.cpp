// Fuzz target: the validator (extract, strict parse, contract, policy) on raw model text,
// against both example catalogs with a WhatsApp counterpart and a grounding source.
// Invariants beyond "no crash": a valid verdict's output validates again to the same
// action, and a rejected one says at which stage and why.

#include <utility>

#include "catalog/catalog.h"
#include "fuzz/fuzz.h"
#include "validator/outbound.h"
#include "validator/validator.h"

namespace {

using namespace dispatchd;

catalog::Catalog load(const char* relative) {
  auto loaded = catalog::Catalog::load_file(fuzz::source_path(relative));
  if (!loaded) fuzz::fail("validator", "cannot load the example catalog");
  return std::move(*loaded);
}

void check(const catalog::Catalog& catalog, std::string_view reply, const validator::Context& context) {
  const validator::Verdict verdict = validator::validate(catalog, reply, context);
  const std::string json = validator::to_json(verdict);
  fuzz::require(!json.empty(), "validator", "empty verdict JSON");
  if (!verdict.ok) {
    fuzz::require(verdict.failed_stage.has_value(), "validator", "a rejection without a stage");
    fuzz::require(verdict.error_count > 0 && !verdict.errors.empty(), "validator", "a rejection without errors");
    fuzz::require(!verdict.feedback.empty(), "validator", "a rejection without feedback");
    return;
  }
  const validator::Verdict again = validator::validate(catalog, verdict.output, context);
  fuzz::require(again.ok, "validator", "a valid reply's output does not validate again");
  fuzz::require(again.action == verdict.action, "validator", "the output validates to another action");
  const auto outbound = validator::outbound_of(catalog, verdict, *context.sender);
  // The policy's point: whatever the text says, a message goes to the counterpart only.
  if (outbound) fuzz::require(outbound->recipient == *context.sender, "validator", "a message to someone else");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const catalog::Catalog es = load("catalog/examples/support.es.json");
  static const catalog::Catalog en = load("catalog/examples/support.en.json");
  const std::string_view reply = fuzz::text(data, size);
  check(es, reply, {"5215512345678", "Hola, ¿cuál es el estado de mi pedido 12345? Soy Ana."});
  check(en, reply, {"15551234567", "Hi, where is my order 12345? This is Ana."});
  return 0;
}
