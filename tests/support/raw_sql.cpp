#include "tests/support/raw_sql.h"

#include "store/internal/access.h"

namespace dispatchd::test {

store::Result<void> exec(store::Database& db, std::string_view sql) { return store::internal::exec(db, sql); }

store::Result<long long> query_int(store::Database& db, std::string_view sql) {
  return store::internal::query_int(db, sql);
}

}  // namespace dispatchd::test
