// dispatchctl backup PATH: an online, verified copy of the SQLite database (store/tools/backup.h).
// A PostgreSQL database is refused (exit 1) with the pg_dump command to run instead.
#include <cstdio>

#include "cli/args.h"
#include "cli/target.h"
#include "store/tools/backup.h"

namespace dispatchd::cli {

int cmd_backup(int argc, char** argv) {
  auto args = parse_args(argc, argv, 2, target_options());
  if (!args) return usage_error(args.error());
  if (args->positional.size() != 1)
    return usage_error("usage: dispatchctl [--config FILE | --db FILE] backup PATH (SQLite only)");
  auto target = open_target(*args);
  if (!target) return usage_error(target.error());
  const std::string& dest = args->positional[0];
  if (target->db.backend() == store::Backend::postgresql) {
    // The store refuses too; here the operator gets the command to run instead.
    std::fprintf(stderr,
                 "dispatchctl: backup: the database is on PostgreSQL, and dispatchctl backup copies SQLite files.\n"
                 "  Use the server's tools: pg_dump --format=custom --file=%s '%s'\n"
                 "  (restore with pg_restore --dbname=URI %s; the password as for psql: PGPASSWORD or ~/.pgpass),\n"
                 "  or continuous archiving (pg_basebackup and WAL archiving) for point-in-time recovery.\n",
                 dest.c_str(), target->db.path().c_str(), dest.c_str());
    return k_exit_rejected;
  }
  auto result = store::backup(target->db, dest);
  if (!result) {
    std::fprintf(stderr, "dispatchctl: backup: %s\n", result.error().message.c_str());
    return k_exit_rejected;
  }
  std::printf("backup: %s written, %lld pages, integrity ok, audit chain ok (%lld events)\n", dest.c_str(),
              static_cast<long long>(result->pages), static_cast<long long>(result->audit_events));
  return k_exit_ok;
}

}  // namespace dispatchd::cli
