#include "tests/support/raw_sql.h"

#include "store/internal/access.h"
#include "store/internal/audit_append.h"
#include "store/transaction.h"

namespace dispatchd::test {

store::Result<void> exec(store::Database& db, std::string_view sql) { return store::internal::exec(db, sql); }

store::Result<long long> query_int(store::Database& db, std::string_view sql) {
  return store::internal::query_int(db, sql);
}

store::Result<void> record_named_event(store::Database& db, const store::AuditRecord& record) {
  return store::transaction<void>(db, [&]() -> store::Result<void> {
    auto hash = store::internal::append_audit_record(db, record);
    if (!hash) return std::unexpected(hash.error());
    return {};
  });
}

store::Result<std::string> append_named_event(store::Database& db, const store::AuditRecord& record) {
  return store::internal::append_audit_record(db, record);
}

}  // namespace dispatchd::test
