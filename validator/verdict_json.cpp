#include <type_traits>

#include "common/json_out.h"
#include "validator/validator.h"

namespace dispatchd::validator {
namespace {

// Findings and repairs share {code, message}; findings add their path first.
template <typename Item>
void write_list(JsonOut& out, std::string_view key, const std::vector<Item>& items) {
  out.begin_array(key);
  for (const auto& item : items) {
    out.begin_object();
    if constexpr (std::is_same_v<Item, Finding>) out.field("path", item.path);
    out.field("code", item.code).field("message", item.message).end_object();
  }
  out.end_array();
}

}  // namespace

std::string to_json(const Verdict& verdict) {
  JsonOut out;
  out.begin_object().field("ok", verdict.ok);
  if (verdict.ok) {
    out.raw("output", verdict.output);
  } else {
    out.field("stage", to_string(*verdict.failed_stage));
    write_list(out, "errors", verdict.errors);
    if (verdict.error_count > verdict.errors.size()) out.field("error_count", verdict.error_count);
    out.field("feedback", verdict.feedback);
  }
  write_list(out, "repairs", verdict.repairs);
  if (verdict.ok) write_list(out, "review", verdict.review);
  return out.end_object().str();
}

}  // namespace dispatchd::validator
