#pragma once
// SQL text on a store Database, for tests and benchmarks: to set a state up or to count
// rows the way an auditor would. The product has no such call outside store/ (the store
// answers by name: tests/modules/layers_test.py holds that); tests may.

#include <string>
#include <string_view>

#include "store/audit.h"
#include "store/database.h"
#include "store/error.h"

namespace dispatchd::test {

// Runs one or more statements that return no rows.
[[nodiscard]] store::Result<void> exec(store::Database& db, std::string_view sql);

// Runs a query returning one integer (0 when it returns no row).
[[nodiscard]] store::Result<long long> query_int(store::Database& db, std::string_view sql);

// An audit event whose kind is any text (store::record_event and store::append_audit take
// the kinds this binary knows): a marker a test looks for, or a kind a newer version wrote.
// record_named_event appends in a transaction of its own; append_named_event inside the
// caller's.
[[nodiscard]] store::Result<void> record_named_event(store::Database& db, const store::AuditRecord& record);
[[nodiscard]] store::Result<std::string> append_named_event(store::Database& db, const store::AuditRecord& record);

}  // namespace dispatchd::test
