#pragma once
// SQL text on a store Database, for tests and benchmarks: to set a state up or to count
// rows the way an auditor would. The product has no such call outside store/ (the store
// answers by name: tests/modules/layers_test.py holds that); tests may.

#include <string_view>

#include "store/database.h"
#include "store/error.h"

namespace dispatchd::test {

// Runs one or more statements that return no rows.
[[nodiscard]] store::Result<void> exec(store::Database& db, std::string_view sql);

// Runs a query returning one integer (0 when it returns no row).
[[nodiscard]] store::Result<long long> query_int(store::Database& db, std::string_view sql);

}  // namespace dispatchd::test
