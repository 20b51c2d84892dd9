#pragma once
// Forward-only schema migrations: numbered files `NNNN_name.sql`, one folder per backend
// under a root (ROOT/sqlite/, ROOT/postgresql/: the same numbers and names), applied in
// order, each in its own transaction together with its row in schema_migrations
// (version, name, sha256, applied_at). A version may have a code step too (C++ run after
// its SQL, in the same transaction): 0013 re-hashes the audit chain (store/audit_digest.h).
//
// Refused with a message naming the file, before anything is applied:
//   - an applied migration whose file changed (sha256 differs) or disappeared
//   - a database newer than this binary (it holds versions no file here knows)
//   - a folder with a badly named file or two files of one version

#include <expected>
#include <functional>
#include <string>
#include <vector>

#include "store/backend.h"
#include "store/database.h"
#include "store/error.h"

namespace dispatchd::store {

struct Migration {
  int version = 0;
  std::string name;  // the file name
  std::string sql;
  std::string sha256;  // hex of the file's bytes
};

// Reads every *.sql file of `root`/<to_string(backend)>/, sorted by version. `root` is what
// `migrations.dir` and `--migrations` name: the folder holding one folder per backend.
[[nodiscard]] Result<std::vector<Migration>> load_migrations(const std::string& root,
                                                             Backend backend = Backend::sqlite);

struct MigrateResult {
  std::vector<std::string> applied;  // file names applied by this call, in order
  int version = 0;                   // the database's version afterwards
};

struct MigrateOptions {
  // Whether `version`'s code step runs on `db`; null runs every step. A file whose audit
  // rows are a segment of another database's chain (an archive file) skips 0013's, so its
  // rows keep the formula they were written with and their link to the live chain.
  std::function<bool(Database& db, int version)> run_code_step;
};

// Applies the pending migrations. `now` is recorded as applied_at (ISO 8601, UTC). A code
// step that fails rolls its version back with it; the error names the file.
[[nodiscard]] Result<MigrateResult> migrate(Database& db, const std::vector<Migration>& migrations,
                                            const std::string& now, const MigrateOptions& options = {});

// The newest applied version (0 for a database no migration has touched).
[[nodiscard]] Result<int> schema_version(Database& db);

// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

}  // namespace dispatchd::store
