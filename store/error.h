#pragma once
// What a store call that failed tells its caller: a kind to branch on, and a message for
// people. Every store function returns Result<T>.
//
// The kinds split into two families a caller must treat differently:
//   retryable  busy, io, full: the database could not do it now (another writer held the
//              lock past the busy timeout, a failed system call, a full disk). The same
//              call may succeed later; nothing was changed.
//   permanent  everything else: the same call will fail again. `not_found` and `refused`
//              are answers about the data (no such row; a state change the row's state
//              does not allow, such as deciding a resolved escalation); `schema`, `corrupt`
//              and `internal` mean the database or the program is wrong.
// Each engine's codes are mapped in one place: SQLite's result codes in
// store/sqlite_connection.cpp (kind_of), PostgreSQL's SQLSTATEs in store/dialect.cpp
// (kind_of_sqlstate, with its table in store/dialect.h).

#include <expected>
#include <string>
#include <string_view>

namespace dispatchd::store {

enum class ErrorKind {
  busy,       // SQLITE_BUSY / SQLITE_LOCKED past the busy timeout; a PostgreSQL lock or
              // serialization failure
  io,         // a failed system call: SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY; no
              // connection to PostgreSQL (refused, lost, the server shutting down)
  full,       // SQLITE_FULL, or an I/O error whose system reason is ENOSPC / EDQUOT
  not_found,  // the row the call is about does not exist
  refused,    // the row's state does not allow the change; a constraint the data broke
  schema,     // migrations: a changed file, a database newer than the binary, bad SQL
  corrupt,    // SQLITE_CORRUPT, SQLITE_NOTADB
  internal,   // anything else: misuse, an unexpected code
};

std::string_view to_string(ErrorKind kind);

// busy, io and full: the same call may succeed later.
bool is_retryable(ErrorKind kind);

struct Error {
  ErrorKind kind = ErrorKind::internal;
  std::string message;  // one line, for logs and people; never parsed

  bool retryable() const { return is_retryable(kind); }

  static Error not_found(std::string message) { return {ErrorKind::not_found, std::move(message)}; }
  static Error refused(std::string message) { return {ErrorKind::refused, std::move(message)}; }
  static Error schema(std::string message) { return {ErrorKind::schema, std::move(message)}; }
  static Error internal(std::string message) { return {ErrorKind::internal, std::move(message)}; }
};

// The same error with `context` in front of its message ("path: message").
Error with_context(Error error, std::string_view context);

template <typename T>
using Result = std::expected<T, Error>;

}  // namespace dispatchd::store
