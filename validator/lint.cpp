#include "validator/lint.h"

#include <algorithm>

namespace dispatchd::validator {
namespace {

Context context_of(const catalog::Example& example) {
  Context context;
  if (!example.sender.empty()) context.sender = example.sender;
  if (!example.source.empty()) context.source = example.source;
  return context;
}

std::string codes(const Verdict& verdict) {
  std::string out;
  for (const auto& e : verdict.errors) out += (out.empty() ? "" : ", ") + e.code;
  return out;
}

}  // namespace

std::vector<catalog::Problem> lint_examples(const catalog::Catalog& catalog, const Limits& limits) {
  std::vector<catalog::Problem> problems;
  const auto report = [&](const std::string& pointer, std::string message) {
    problems.push_back({catalog.origin(), pointer, std::move(message)});
  };
  for (std::size_t a = 0; a < catalog.actions().size(); ++a) {
    const catalog::Action& action = catalog.actions()[a];
    if (std::none_of(action.examples.begin(), action.examples.end(), [](const auto& e) { return e.valid; })) {
      report("/actions/" + std::to_string(a), "action \"" + action.name + "\" has no valid example");
    }
    for (const auto& example : action.examples) {
      const Verdict verdict = validate(catalog, example.reply, context_of(example), limits);
      if (example.valid && !verdict.ok) {
        report(example.pointer, "a valid example is rejected: " + verdict.errors.front().message);
      } else if (example.valid && verdict.action != action.name) {
        report(example.pointer, "a valid example chooses \"" + verdict.action + "\", not \"" + action.name + "\"");
      } else if (!example.valid && verdict.ok) {
        report(example.pointer, "an invalid example is accepted");
      } else if (!example.valid && !example.expect_code.empty() &&
                 std::none_of(verdict.errors.begin(), verdict.errors.end(),
                              [&](const Finding& f) { return f.code == example.expect_code; })) {
        report(example.pointer, "an invalid example fails with " + codes(verdict) + ", not " + example.expect_code);
      }
    }
  }
  return problems;
}

}  // namespace dispatchd::validator
