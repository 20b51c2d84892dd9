#include "store/migrations.h"

#include "common/text.h"

#include "store/audit_digest.h"
#include "store/internal/sql.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <openssl/evp.h>

namespace dispatchd::store {
namespace {

namespace fs = std::filesystem;

// "0007_add_index.sql" -> 7; anything not shaped NNNN_name.sql -> nullopt.
std::optional<int> version_of(const std::string& file) {
  if (file.size() < 10 || file[4] != '_' || !file.ends_with(".sql")) return std::nullopt;
  int version = 0;
  const auto [end, ec] = std::from_chars(file.data(), file.data() + 4, version);
  if (ec != std::errc() || end != file.data() + 4 || version <= 0) return std::nullopt;
  return version;
}

struct Applied {
  std::string name;
  std::string sha256;
};

Result<std::map<int, Applied>> applied_rows(Database& db) {
  if (auto ok = internal::exec(db,
                               "CREATE TABLE IF NOT EXISTS schema_migrations ("
                               " version INTEGER PRIMARY KEY, name TEXT NOT NULL, sha256 TEXT NOT NULL,"
                               " applied_at TEXT NOT NULL)");
      !ok) {
    return std::unexpected(with_context(std::move(ok.error()), "cannot create schema_migrations"));
  }
  auto rows = Query::prepare(db, "SELECT version, name, sha256 FROM schema_migrations");
  if (!rows) return std::unexpected(rows.error());
  std::map<int, Applied> applied;
  while (true) {
    auto row = rows->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    applied[static_cast<int>(rows->integer(0))] = {rows->text(1), rows->text(2)};
  }
  return applied;
}

// The code steps, by version: C++ that a version's SQL cannot express.
struct CodeStep {
  int version;
  Result<void> (*run)(Database& db, const std::string& now);
};
constexpr CodeStep k_code_steps[] = {
    {13, rechain_audit},
};

Result<void> run_code_step(Database& db, int version, const std::string& now, const MigrateOptions& options) {
  for (const CodeStep& step : k_code_steps) {
    if (step.version != version) continue;
    if (options.run_code_step && !options.run_code_step(db, version)) return {};
    return step.run(db, now);
  }
  return {};
}

// A SQLite migration that rebuilds a table other tables point at (SQLite cannot change a
// constraint in place) says so on its first line: foreign keys are then off while it runs,
// which PRAGMA can only change outside a transaction, and checked before it commits (the
// procedure SQLite's documentation gives for a table rebuild).
constexpr std::string_view k_foreign_keys_off = "-- dispatchd: foreign keys off during this migration";

Result<void> apply(Database& db, const Migration& m, const std::string& now, const MigrateOptions& options) {
  const bool keys_off = db.backend() == Backend::sqlite && m.sql.starts_with(k_foreign_keys_off);
  if (keys_off) DISPATCHD_TRY(internal::exec(db, "PRAGMA foreign_keys=OFF"));
  auto applied = transaction<void>(db, [&]() -> Result<void> {
    if (auto ok = internal::exec(db, m.sql); !ok) return ok;
    if (keys_off) {
      auto broken = internal::query_int(db, "SELECT count(*) FROM pragma_foreign_key_check");
      if (!broken) return std::unexpected(broken.error());
      if (*broken != 0)
        return std::unexpected(Error::schema(std::to_string(*broken) + " row(s) would break a foreign key"));
    }
    DISPATCHD_TRY(run_code_step(db, m.version, now, options));
    auto insert =
        Query::prepare(db, "INSERT INTO schema_migrations(version, name, sha256, applied_at) VALUES (?,?,?,?)");
    if (!insert) return std::unexpected(insert.error());
    insert->bind(1, m.version).bind(2, m.name).bind(3, m.sha256).bind(4, now);
    DISPATCHD_TRY(insert->run());
    return {};
  });
  if (keys_off) {
    if (auto on = internal::exec(db, "PRAGMA foreign_keys=ON"); !on && applied) return std::unexpected(on.error());
  }
  if (!applied) return std::unexpected(with_context(std::move(applied.error()), m.name));
  return {};
}

}  // namespace

Result<int> schema_version(Database& db) {
  auto exists = internal::query_int(
      db, per_backend(db.backend(), [](Backend b) { return sql::table_exists(b, "schema_migrations"); }));
  if (!exists) return std::unexpected(exists.error());
  if (*exists == 0) return 0;
  auto version = internal::query_int(db, "SELECT coalesce(max(version), 0) FROM schema_migrations");
  if (!version) return std::unexpected(version.error());
  return static_cast<int>(*version);
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  return text::hex(std::span<const unsigned char>(digest, length));
}

Result<std::vector<Migration>> load_migrations(const std::string& root, Backend backend) {
  const std::string folder = (fs::path(root) / to_string(backend)).string();
  std::error_code ec;
  fs::directory_iterator it(folder, ec);
  if (ec)
    return std::unexpected(Error{ErrorKind::io, "cannot read the migrations folder " + folder + ": " + ec.message()});
  std::vector<Migration> out;
  for (const auto& entry : it) {
    const std::string file = entry.path().filename().string();
    if (!file.ends_with(".sql")) continue;
    const auto version = version_of(file);
    if (!version)
      return std::unexpected(Error::schema(folder + "/" + file + ": migration files are named NNNN_name.sql"));
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (!in) return std::unexpected(Error{ErrorKind::io, "cannot read " + entry.path().string()});
    out.push_back({*version, file, bytes.str(), sha256_hex(bytes.str())});
  }
  std::sort(out.begin(), out.end(), [](const Migration& a, const Migration& b) { return a.version < b.version; });
  for (std::size_t i = 1; i < out.size(); ++i) {
    if (out[i].version == out[i - 1].version) {
      return std::unexpected(Error::schema("two migrations have version " + std::to_string(out[i].version) + ": " +
                                           out[i - 1].name + " and " + out[i].name));
    }
  }
  return out;
}

Result<MigrateResult> migrate(Database& db, const std::vector<Migration>& migrations, const std::string& now,
                              const MigrateOptions& options) {
  auto applied = applied_rows(db);
  if (!applied) return std::unexpected(applied.error());
  std::map<int, const Migration*> known;
  for (const auto& m : migrations) known[m.version] = &m;
  // Check everything before changing anything.
  for (const auto& [version, row] : *applied) {
    const auto it = known.find(version);
    if (it == known.end()) {
      return std::unexpected(Error::schema("the database has migration " + row.name +
                                           ", which this dispatchd does not know: "
                                           "the database is newer than this binary"));
    }
    if (it->second->sha256 != row.sha256) {
      return std::unexpected(Error::schema("migration " + row.name + " was changed after it was applied (sha256 " +
                                           row.sha256 + " in the database, " + it->second->sha256 +
                                           " on disk); applied migrations are never edited"));
    }
  }
  MigrateResult result;
  result.version = applied->empty() ? 0 : applied->rbegin()->first;
  for (const auto& m : migrations) {
    if (applied->contains(m.version)) continue;
    if (auto ok = apply(db, m, now, options); !ok) return std::unexpected(ok.error());
    result.applied.push_back(m.name);
    result.version = m.version;
  }
  return result;
}

}  // namespace dispatchd::store
