#pragma once
// The PostgreSQL role's password, which is never in the configuration file. dispatchd and
// dispatchctl both ask this function, in this order:
//   1. the systemd credential `database_password`: the file
//      $CREDENTIALS_DIRECTORY/database_password (LoadCredential= or
//      SetCredentialEncrypted= in the unit), trailing newlines removed;
//   2. the environment variable named by `database_password_env`; named but unset (or
//      empty) is an error, never a silent fall-through to 3;
//   3. none: the password is left to libpq, which reads PGPASSWORD and ~/.pgpass
//      (PGPASSFILE) as usual, or the server needs none (peer, trust, certificates).
// A SQLite database needs no password: the answer is `none` without looking.
//
// Pure: the environment and the credentials folder come in PasswordSources, so that tests
// inject them; system_sources() reads the process's own. Errors name the variable or the
// file, never the value.

#include <cstddef>
#include <expected>
#include <functional>
#include <optional>
#include <string>

#include "config/config.h"

namespace dispatchd::config {

enum class PasswordSource {
  none,         // libpq's own (PGPASSWORD, ~/.pgpass), or SQLite
  credential,   // $CREDENTIALS_DIRECTORY/database_password
  environment,  // the variable named by database_password_env
};

struct DatabasePassword {
  PasswordSource source = PasswordSource::none;
  std::string value;   // empty for `none`
  std::string origin;  // where it came from, for messages: the file's path or the variable's name
};

enum class PasswordErrorKind {
  env_unset,   // database_password_env names a variable that is unset or empty
  unreadable,  // the credential file exists but cannot be read, is empty or too large
};

struct PasswordError {
  PasswordErrorKind kind;
  std::string message;  // names the variable or the file, never a value
};

struct PasswordSources {
  // getenv-like: the variable's value, or nullopt when unset.
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  // $CREDENTIALS_DIRECTORY, or nullopt when the process has no credentials.
  std::optional<std::string> credentials_dir;
};

// The credential's file name under $CREDENTIALS_DIRECTORY.
inline constexpr const char* k_password_credential = "database_password";
// A password longer than this is a wrong file, not a password.
inline constexpr std::size_t k_max_password_bytes = 4096;

// The process's environment and $CREDENTIALS_DIRECTORY.
PasswordSources system_sources();

// The password for `database` (a postgresql:// URI or a SQLite path) given
// `password_env` (database_password_env; may be empty), in the order above.
[[nodiscard]] std::expected<DatabasePassword, PasswordError> resolve_database_password(const std::string& database,
                                                                                       const std::string& password_env,
                                                                                       const PasswordSources& sources);

// Shorthand: the configuration's database and database_password_env, with system_sources().
[[nodiscard]] std::expected<DatabasePassword, PasswordError> database_password(const Config& config);

// One line for --check-config: where the password comes from ("database password: from the
// systemd credential /run/credentials/x/database_password").
std::string describe(const DatabasePassword& password);

// True when a postgresql:// URI carries a password (user:secret@ or ?password=...): the
// configuration check refuses it, since the file's contents may be logged or shown.
bool uri_has_password(const std::string& uri);

}  // namespace dispatchd::config
