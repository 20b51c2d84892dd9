// dispatchctl migrate-store --from PATH --to URI: moves a SQLite deployment's rows into an
// empty PostgreSQL database (store/tools/migrate_store.h); progress per table on stderr.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/clock.h"
#include "config/config.h"
#include "store/tools/migrate_store.h"

namespace dispatchd::cli {

namespace {

constexpr const char* k_migrate_store_usage =
    "usage: dispatchctl migrate-store --from PATH --to postgresql://USER@HOST:PORT/DB [--migrations DIR]";

}  // namespace

int cmd_migrate_store(int argc, char** argv) {
  auto args = parse_args(argc, argv, 2, {{"from", true}, {"to", true}, {"migrations", true}});
  if (!args) return usage_error(args.error());
  const auto from = args->get("from");
  const auto to = args->get("to");
  if (!from || !to || !args->positional.empty()) return usage_error(k_migrate_store_usage);
  if (store::backend_of(*from) != store::Backend::sqlite) return usage_error("--from names the SQLite file");
  if (store::backend_of(*to) != store::Backend::postgresql) return usage_error("--to is a postgresql:// URI");
  const auto migrations = store::load_migrations(args->get("migrations").value_or(config::default_migrations_dir()),
                                                 store::Backend::postgresql);
  if (!migrations) return usage_error(migrations.error().message);
  auto source = store::Database::open(*from, store::Database::Mode::existing);
  if (!source) return usage_error(source.error().message);
  // The password: libpq's own PGPASSWORD or ~/.pgpass (never in the URI on a command line).
  auto target = store::Database::open(*to, store::Database::Mode::existing);
  if (!target) {
    std::fprintf(stderr, "dispatchctl: migrate-store: %s\n", target.error().message.c_str());
    return k_exit_rejected;
  }
  store::MigrateStoreOptions options;
  options.on_table = [](const store::TableCopied& table) {
    std::fprintf(stderr, "migrate-store: %s: %lld rows\n", table.table.c_str(), static_cast<long long>(table.rows));
  };
  const auto moved = store::migrate_store(*source, *target, *migrations, store::format_time(now()), options);
  if (!moved) {
    std::fprintf(stderr, "dispatchctl: migrate-store: %s (%s); the target is unchanged\n",
                 moved.error().error.message.c_str(), std::string(store::to_string(moved.error().failure)).c_str());
    return k_exit_rejected;
  }
  long long rows = 0;
  for (const auto& table : moved->tables) rows += table.rows;
  const std::string head =
      moved->head ? std::to_string(moved->head->last_id) + " " + moved->head->last_hash : std::string("none");
  std::printf(
      "migrate-store: %zu tables, %lld rows moved at schema version %d; audit chain ok on both sides (%lld "
      "events, head %s)\n",
      moved->tables.size(), rows, moved->schema_version, static_cast<long long>(moved->audit_events), head.c_str());
  return k_exit_ok;
}

}  // namespace dispatchd::cli
