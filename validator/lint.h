#pragma once
// Catalog lint beyond loading: every example must get the verdict it claims.

#include <vector>

#include "catalog/catalog.h"
#include "validator/validator.h"

namespace dispatchd::validator {

// Runs each example through validate() with its own sender and source. A valid example
// must pass; an invalid one must fail, with its `expect` code among the errors when given.
// Every action needs at least one valid example. Returns the problems, empty when clean.
std::vector<catalog::Problem> lint_examples(const catalog::Catalog& catalog, const Limits& limits = {});

}  // namespace dispatchd::validator
