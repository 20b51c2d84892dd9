#include "validator/checks.h"

namespace dispatchd::validator {

std::string feedback_text(const catalog::Catalog& catalog, const std::vector<Finding>& errors, std::size_t total) {
  // Sized once and appended to piece by piece: no temporary strings, no regrowth.
  std::size_t size = 256 + catalog.contract_line().size();
  for (const auto& e : errors) size += e.path.size() + e.code.size() + e.message.size() + 16;
  std::string out;
  out.reserve(size);
  out += "Your previous reply was rejected: ";
  out += std::to_string(total);
  out += total == 1 ? " error.\n" : " errors.\n";
  for (const auto& e : errors) {
    out += "- ";
    out += e.path.empty() ? std::string_view("reply") : std::string_view(e.path);
    out += " (";
    out += e.code;
    out += "): ";
    out += e.message;
    out += '\n';
  }
  if (total > errors.size()) {
    out += "- and ";
    out += std::to_string(total - errors.size());
    out += " more\n";
  }
  out += "Reply with exactly ONE JSON object and nothing else, in this format:\n";
  out += catalog.contract_line();
  out += "\nFix every error listed above and reply again.";
  return out;
}

}  // namespace dispatchd::validator
