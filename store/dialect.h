#pragma once
// Pure functions about how the store's SQL meets PostgreSQL, public so that a table test
// can hold them (store/internal/ is closed to tests).
//
// to_postgresql_placeholders: the store writes parameters as SQLite does, `?` and `?N`;
// libpq wants `$N`. `?N` becomes `$N`; a bare `?` takes one more than the largest number
// used before it (SQLite's rule), so `?2, ?` is `$2, $3`. Question marks inside string
// literals ('...', with '' as a quote), quoted identifiers ("...") and comments (-- to the
// end of the line, /* ... */) stay as they are. Not understood, and so not to be used in
// store SQL: dollar-quoted strings, and jsonb's `?` operators.
//
// kind_of_sqlstate: the one mapping from PostgreSQL's SQLSTATE codes to ours
// (store/error.h), as kind_of is for SQLite's result codes:
//   busy      40001 serialization failure, 40P01 deadlock, 55P03 lock not available
//   io        class 08 (connection exception), 57P01-57P03 (the server shutting down or
//             not yet accepting connections)
//   full      53100 disk full
//   refused   class 23 (integrity constraint violation)
//   corrupt   XX001 data corrupted, XX002 index corrupted
//   internal  anything else (a syntax error, a missing table: the program is wrong)

#include <string>
#include <string_view>

#include "store/error.h"

namespace dispatchd::store {

struct PostgresqlSql {
  std::string text;    // with $N placeholders
  int parameters = 0;  // the largest N: what the statement is prepared with
};

PostgresqlSql to_postgresql_placeholders(std::string_view sql);

ErrorKind kind_of_sqlstate(std::string_view sqlstate);

}  // namespace dispatchd::store
