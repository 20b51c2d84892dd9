#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: the audit chain's append of a row's content as text.

#include <string>

#include "store/audit.h"
#include "store/database.h"
#include "store/error.h"

namespace dispatchd::store::internal {

// Appends `record` after the newest row, its kind as the text given: append_audit's step
// (store/audit.h, same REQUIRES), and the tests' way to write a row whose kind this binary
// does not know, as a newer version would (tests/support/raw_sql.h). Returns its hash.
[[nodiscard]] Result<std::string> append_audit_record(Database& db, const AuditRecord& record);

}  // namespace dispatchd::store::internal
