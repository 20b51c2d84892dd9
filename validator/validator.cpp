#include "validator/validator.h"

#include "common/strict_json.h"
#include "validator/checks.h"
#include "validator/extract.h"

namespace dispatchd::validator {
namespace {

Verdict fail(Verdict verdict, Stage stage, std::vector<Finding> errors, const catalog::Catalog& catalog) {
  verdict.ok = false;
  verdict.failed_stage = stage;
  verdict.error_count = errors.size();
  if (errors.size() > k_max_errors) errors.resize(k_max_errors);
  verdict.errors = std::move(errors);
  verdict.feedback = feedback_text(catalog, verdict.errors, verdict.error_count);
  return verdict;
}

}  // namespace

Verdict validate(const catalog::Catalog& catalog, std::string_view reply, const Context& context,
                 const Limits& limits) {
  Verdict verdict;
  Extraction extraction = extract(reply, limits);
  verdict.repairs = std::move(extraction.repairs);
  if (extraction.error) return fail(std::move(verdict), Stage::extract, {*extraction.error}, catalog);

  const std::string_view text = reply.substr(extraction.offset, extraction.length);
  json::ParseArena arena;
  auto parsed = json::parse_strict(text, {.max_depth = limits.max_depth, .input_utf8_checked = true}, true, &arena);
  if (!parsed) {
    const auto& e = parsed.error();
    const std::string at = " at byte " + std::to_string(extraction.offset + e.offset) + " of the reply";
    return fail(std::move(verdict), Stage::parse, {{"", e.code, e.message + at}}, catalog);
  }
  if (parsed->used_trailing_commas) verdict.repairs.push_back({"trailing_comma", "ignored a trailing comma"});
  const rapidjson::Value& object = parsed->document;
  if (!object.IsObject()) {
    return fail(std::move(verdict), Stage::parse,
                {{"", "not_object", std::string("expected one JSON object, got ") + json::type_name(object)}}, catalog);
  }

  const catalog::Action* action = nullptr;
  std::vector<Finding> errors = check_contract(catalog, object, action);
  if (!errors.empty()) return fail(std::move(verdict), Stage::contract, std::move(errors), catalog);

  check_policy(catalog, *action, object, context, errors, verdict.review);
  if (!errors.empty()) {
    verdict.review.clear();
    return fail(std::move(verdict), Stage::policy, std::move(errors), catalog);
  }
  verdict.ok = true;
  verdict.action = action->name;
  // The reply as the model wrote it, minus whitespace: cheaper than re-serializing, and
  // escapes stay as written. A trailing-comma repair needs the re-serialized form.
  verdict.output = parsed->used_trailing_commas ? json::to_string(object) : json::minify(text);
  return verdict;
}

const char* to_string(Stage stage) {
  switch (stage) {
    case Stage::extract: return "extract";
    case Stage::parse: return "parse";
    case Stage::contract: return "contract";
    case Stage::policy: return "policy";
  }
  return "?";
}

}  // namespace dispatchd::validator
