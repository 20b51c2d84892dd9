#include "validator/checks.h"

namespace dispatchd::validator {

std::string feedback_text(const catalog::Catalog& catalog, const std::vector<Finding>& errors, std::size_t total) {
  std::string out = "Your previous reply was rejected: " + std::to_string(total) +
                    (total == 1 ? " error" : " errors") + ".\n";
  for (const auto& e : errors) {
    out += "- " + (e.path.empty() ? std::string("reply") : e.path) + " (" + e.code + "): " + e.message + "\n";
  }
  if (total > errors.size()) out += "- and " + std::to_string(total - errors.size()) + " more\n";
  out += "Reply with exactly ONE JSON object and nothing else, in this format:\n";
  out += catalog.contract_line() + "\n";
  out += "Fix every error listed above and reply again.";
  return out;
}

}  // namespace dispatchd::validator
