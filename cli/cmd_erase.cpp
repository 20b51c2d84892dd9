// dispatchctl erase: a customer's personal data replaced by tombstones and a salted digest
// (store/tools/erase.h says what is erased and what remains), with the audit chain intact; runs
// while dispatchd runs. Exit 0 erased and scrubbed, 1 refused (not finished, no such
// counterpart) or erased but not scrubbed (the old bytes may remain in free pages or the
// WAL: run `erase --scrub-only` later), 2 usage. On PostgreSQL the scrub is VACUUM FULL; the
// server's WAL is the server's to recycle (exit 0 with a note).
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/clock.h"
#include "cli/target.h"
#include "connectors/registry.h"
#include "store/tools/erase.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_erase_usage =
    "usage: dispatchctl [--config FILE | --db FILE|URI] erase --counterpart ID_OR_ADDRESS --as NAME [--no-vacuum]\n"
    "       dispatchctl [--config FILE | --db FILE|URI] erase --scrub-only [--no-vacuum]";

void print_scrub(const store::EraseResult::Scrub& scrub, bool vacuum, store::Backend backend) {
  std::printf("scrub: %s, %s\n", vacuum ? (scrub.vacuumed ? "vacuumed" : "not vacuumed") : "vacuum skipped",
              backend == store::Backend::postgresql ? "WAL left to the server"
              : scrub.wal_truncated                 ? "WAL truncated"
                                                    : "WAL not truncated");
}

// PostgreSQL: VACUUM FULL is all a client can do; the server's WAL (and its archive and
// base backups) keep the old row versions until it recycles them, which no later run of
// ours changes. So a finished VACUUM is success, with that said, and `--scrub-only` again
// is advice only when the VACUUM itself failed.
int postgresql_scrub_outcome(const store::EraseResult::Scrub& scrub, bool vacuum) {
  if (!vacuum || scrub.vacuumed) {
    std::fprintf(stderr,
                 "dispatchctl: note: %s (a CHECKPOINT and the server's WAL recycling remove them; WAL archives and "
                 "base backups keep them until they expire)\n",
                 scrub.problem.c_str());
    return k_exit_ok;
  }
  std::fprintf(stderr, "dispatchctl: %s; run `dispatchctl erase --scrub-only` again later\n", scrub.problem.c_str());
  return k_exit_rejected;
}

// 0 when the scrub finished, else 1 with the reason on stderr.
int scrub_outcome(const store::EraseResult::Scrub& scrub, bool vacuum, store::Backend backend) {
  print_scrub(scrub, vacuum, backend);
  if (backend == store::Backend::postgresql) return postgresql_scrub_outcome(scrub, vacuum);
  if (scrub.problem.empty()) return k_exit_ok;
  std::fprintf(stderr,
               "dispatchctl: %s; the old bytes may remain in the database's free space or WAL: run "
               "`dispatchctl erase --scrub-only` again later\n",
               scrub.problem.c_str());
  return k_exit_rejected;
}

}  // namespace

int cmd_erase(int argc, char** argv) {
  auto specs = target_options();
  specs.insert(specs.end(), {{"counterpart", true}, {"as", true}, {"no-vacuum", false}, {"scrub-only", false}});
  auto args = parse_args(argc, argv, 2, specs);
  if (!args) return usage_error(args.error());
  if (!args->positional.empty()) return usage_error(k_erase_usage);
  const bool vacuum = !args->has("no-vacuum");
  const auto counterpart = args->get("counterpart");
  const auto who = args->get("as");
  if (args->has("scrub-only")) {
    if (counterpart || who)
      return usage_error("--scrub-only takes neither --counterpart nor --as\n" + std::string(k_erase_usage));
  } else {
    if (!counterpart || counterpart->empty())
      return usage_error("erase needs --counterpart ID_OR_ADDRESS\n" + std::string(k_erase_usage));
    if (!who || who->empty()) return usage_error("erase needs --as NAME (who asked is recorded)");
  }
  auto target = open_target(*args);
  if (!target) return usage_error(target.error());
  if (args->has("scrub-only"))
    return scrub_outcome(store::scrub_free_space(target->db, vacuum), vacuum, target->db.backend());

  store::EraseRequest request{*counterpart, *who, vacuum, {}};
  for (const auto* kind : connectors::kinds()) {
    if (kind->provider_ids_name_counterpart) request.digest_provider_ids_of.emplace_back(kind->name);
  }
  auto erased = store::erase_counterpart(target->db, request, now());
  if (!erased) {
    const auto kind = erased.error().kind;
    if (kind == store::ErrorKind::refused || kind == store::ErrorKind::not_found) {
      std::fprintf(stderr, "dispatchctl: refused: %s\n", erased.error().message.c_str());
      return k_exit_rejected;
    }
    return usage_error("cannot erase: " + erased.error().message);
  }
  std::printf(
      "erased %lld messages, %lld attempts, %lld actions, %lld escalations, %lld audit events of %s "
      "(audit event %lld)\n",
      static_cast<long long>(erased->messages), static_cast<long long>(erased->attempts),
      static_cast<long long>(erased->actions), static_cast<long long>(erased->escalations),
      static_cast<long long>(erased->audit_events), erased->digest.c_str(), static_cast<long long>(erased->audit_id));
  return scrub_outcome(erased->scrub, vacuum, target->db.backend());
}

}  // namespace dispatchd::cli
