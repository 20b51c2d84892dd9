#include "validator/validator.h"

#include "common/json_reader.h"
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

json::ParseLimits parse_limits(const Limits& limits) {
  return {.max_depth = limits.max_depth, .input_utf8_checked = true};  // extract() checked the UTF-8
}

// The text is not one strict JSON object, and the reader does not say why: parse_strict,
// which accepts the same objects, gives the error (or the type of a value that is valid
// JSON but no object). Rare, so its DOM costs nothing that matters.
Verdict refuse_unread(Verdict verdict, std::string_view text, std::size_t offset, const Limits& limits,
                      const catalog::Catalog& catalog) {
  auto parsed = json::parse_strict(text, parse_limits(limits), true);
  if (!parsed) {
    const auto& e = parsed.error();
    const std::string at = " at byte " + std::to_string(offset + e.offset) + " of the reply";
    return fail(std::move(verdict), Stage::parse, {{"", e.code, e.message + at}}, catalog);
  }
  if (parsed->used_trailing_commas) verdict.repairs.push_back({"trailing_comma", "ignored a trailing comma"});
  const rapidjson::Value& value = parsed->document;
  if (!value.IsObject()) {
    return fail(std::move(verdict), Stage::parse,
                {{"", "not_object", std::string("expected one JSON object, got ") + json::type_name(value)}}, catalog);
  }
  // Unreachable while the two parsers agree (tests/common/json_reader_test.cpp); refuse
  // rather than pass a reply nothing has checked.
  return fail(std::move(verdict), Stage::parse, {{"", "syntax", "the JSON could not be read strictly"}}, catalog);
}

// The reply minus whitespace, as validated. A trailing comma must go too, so that case is
// re-serialized (rare).
std::string output_of(json::Object& object, std::string_view text, const Limits& limits) {
  if (!object.used_trailing_commas()) return std::move(object.compact());
  auto parsed = json::parse_strict(text, parse_limits(limits), true);
  return parsed ? json::to_string(parsed->document) : std::string();
}

}  // namespace

Verdict validate(const catalog::Catalog& catalog, std::string_view reply, const Context& context,
                 const Limits& limits) {
  Verdict verdict;
  json::Object object;
  Extraction extraction = extract(reply, limits, object);
  verdict.repairs = std::move(extraction.repairs);
  if (extraction.error) return fail(std::move(verdict), Stage::extract, {*extraction.error}, catalog);

  const std::string_view text = reply.substr(extraction.offset, extraction.length);
  if (!extraction.object_read && !json::read_object(text, limits.max_depth, object)) {
    return refuse_unread(std::move(verdict), text, extraction.offset, limits, catalog);
  }
  if (object.used_trailing_commas()) verdict.repairs.push_back({"trailing_comma", "ignored a trailing comma"});

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
  // The reply as the model wrote it, minus whitespace: escapes stay as written.
  verdict.output = output_of(object, text, limits);
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
