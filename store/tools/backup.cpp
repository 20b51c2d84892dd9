#include "store/tools/backup.h"

#include <cstdio>
#include <filesystem>

#include <sqlite3.h>

#include "store/internal/access.h"

#include "store/audit.h"

namespace dispatchd::store {
namespace {

Result<std::int64_t> copy_pages(Database& source, const std::string& path) {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    Error error{ErrorKind::io, path + ": " + (raw ? sqlite3_errmsg(raw) : "cannot open")};
    sqlite3_close_v2(raw);
    return std::unexpected(std::move(error));
  }
  sqlite3_backup* copy = sqlite3_backup_init(raw, "main", internal::Access::handle(source), "main");
  if (!copy) {
    Error error{ErrorKind::internal, path + ": " + sqlite3_errmsg(raw)};
    sqlite3_close_v2(raw);
    return std::unexpected(std::move(error));
  }
  // -1: every page in one step, under one read transaction of the source.
  int rc = sqlite3_backup_step(copy, -1);
  for (int tries = 0; (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && tries < 50; ++tries) {
    sqlite3_sleep(100);
    rc = sqlite3_backup_step(copy, -1);
  }
  const std::int64_t pages = sqlite3_backup_pagecount(copy);
  sqlite3_backup_finish(copy);
  const std::string error = rc == SQLITE_DONE ? "" : sqlite3_errstr(rc);
  sqlite3_close_v2(raw);
  if (!error.empty()) {
    const bool busy = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
    return std::unexpected(Error{busy ? ErrorKind::busy : ErrorKind::io, "backup failed: " + error});
  }
  return pages;
}

}  // namespace

Result<BackupResult> backup(Database& db, const std::string& dest) {
  if (db.backend() == Backend::postgresql) {
    return std::unexpected(Error::refused(
        "use pg_dump: a PostgreSQL store is backed up by the server's own tools (pg_dump --format=custom "
        "--file=FILE URI, or continuous archiving); dispatchctl backup copies SQLite files"));
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dest, ec)) return std::unexpected(Error::refused(dest + " exists; a backup never overwrites a file"));
  const std::string partial = dest + ".partial";
  fs::remove(partial, ec);
  fs::remove(partial + "-wal", ec);
  fs::remove(partial + "-shm", ec);
  const auto fail = [&](Error error) -> Result<BackupResult> {
    fs::remove(partial, ec);
    fs::remove(partial + "-wal", ec);
    fs::remove(partial + "-shm", ec);
    return std::unexpected(std::move(error));
  };
  auto pages = copy_pages(db, partial);
  if (!pages) return fail(pages.error());
  BackupResult result{*pages, 0};
  {
    auto copy = Database::open(partial, Database::Mode::existing);
    if (!copy) return fail(copy.error());
    auto integrity =
        internal::query_int(*copy, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'");
    if (!integrity || *integrity != 0) return fail({ErrorKind::corrupt, "the copy fails integrity_check"});
    auto audit = verify_audit(*copy);
    if (!audit) return fail(with_context(std::move(audit.error()), "cannot read the copy's audit trail"));
    if (audit->first_broken) {
      return fail(Error::refused("the copy's audit chain is broken at audit id " +
                                 std::to_string(*audit->first_broken) + ": " + audit->reason));
    }
    result.audit_events = audit->events;
    // Fold the WAL into the file so that the backup is one self-contained file.
    if (auto ok = internal::exec(*copy, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE"); !ok)
      return fail(ok.error());
  }
  fs::rename(partial, dest, ec);
  if (ec) return fail({ErrorKind::io, "cannot rename the copy to " + dest + ": " + ec.message()});
  return result;
}

}  // namespace dispatchd::store
