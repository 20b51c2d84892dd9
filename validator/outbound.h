#pragma once
// What a valid reply sends: for an action of kind reply, the recipient (its policy's
// recipient_field) and the message text (its text_field), decoded from the verdict's output.
// Shared by the agent loop and the staff commands so both fill the outbox the same way.

#include <optional>
#include <string>

#include "catalog/catalog.h"
#include "validator/validator.h"

namespace dispatchd::validator {

struct Outbound {
  std::string recipient;
  std::string body;
};

// nullopt unless `verdict` is ok and its action is a reply with a text field. Without a
// recipient_field the message goes to `counterpart`.
std::optional<Outbound> outbound_of(const catalog::Catalog& catalog, const Verdict& verdict,
                                    const std::string& counterpart);

}  // namespace dispatchd::validator
