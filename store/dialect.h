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
//
// namespace sql: the fragments of SQL for which the two engines have no common spelling,
// one builder per idiom. The store writes portable SQL wherever there is one (CASE instead
// of a sum over a boolean, ON CONFLICT DO NOTHING instead of INSERT OR IGNORE); where there
// is none, a statement builds its text once per engine from these (store/internal/sql.h,
// per_backend), so the SQLite text is what it always was and no call pays for the choice.

#include <string>
#include <string_view>
#include <vector>

#include "store/backend.h"
#include "store/error.h"

namespace dispatchd::store {

struct PostgresqlSql {
  std::string text;    // with $N placeholders
  int parameters = 0;  // the largest N: what the statement is prepared with
};

PostgresqlSql to_postgresql_placeholders(std::string_view sql);

ErrorKind kind_of_sqlstate(std::string_view sqlstate);

namespace sql {

// A top-level member of the JSON object in the text column `column`, as text (a string's
// value; an object or array as JSON text; NULL when missing). `key` is a plain identifier.
std::string json_text(Backend backend, std::string_view column, std::string_view key);
// The same member as an integer, for comparing with an id column.
std::string json_integer(Backend backend, std::string_view column, std::string_view key);
// A table named `alias` of the elements of the JSON array of integers bound as text to
// `parameter` (e.g. "?1"): `value`, an integer, and `key`, which orders them as in the
// array. For after FROM, as in `IN (SELECT value FROM <this>)`.
std::string json_integers(Backend backend, std::string_view parameter, std::string_view alias);
// An aggregate: the JSON array text of `column`'s integers in `order_by` order; "[]" for no row.
std::string json_integer_array(Backend backend, std::string_view column, std::string_view order_by);
// True when the text `needle` (an expression, e.g. "?2") occurs in `haystack`.
std::string contains(Backend backend, std::string_view haystack, std::string_view needle);
// `texts` as a parenthesised list of string literals, for after IN: "('a', 'b')"; "(NULL)",
// which matches nothing, for none. The same on both engines.
std::string text_list(const std::vector<std::string>& texts);
// A query giving 1 when the table `table` (a plain identifier) exists, else 0.
std::string table_exists(Backend backend, std::string_view table);
// A query giving 1 when `table` has the column `column`, else 0.
std::string column_exists(Backend backend, std::string_view table, std::string_view column);

}  // namespace sql

}  // namespace dispatchd::store
