// dispatchctl audit verify: recomputes the audit trail's hash chain.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "store/audit.h"

namespace dispatchd::cli {

int cmd_audit(int argc, char** argv) {
  auto args = parse_args(argc, argv, 2, {{"db", true}});
  if (!args) return usage_error(args.error());
  if (args->positional != std::vector<std::string>{"verify"}) return usage_error("usage: dispatchctl audit verify --db FILE");
  const auto path = args->get("db");
  if (!path) return usage_error("audit needs --db FILE");
  auto db = store::Database::open(*path);
  if (!db) return usage_error(db.error());
  const auto check = store::verify_audit(*db);
  if (!check) return usage_error("cannot read the audit trail: " + check.error());
  if (check->first_broken) {
    std::printf("audit: BROKEN at audit id %lld after %lld events: %s\n", static_cast<long long>(*check->first_broken),
                static_cast<long long>(check->events - 1), check->reason.c_str());
    return k_exit_rejected;
  }
  std::printf("audit: ok, %lld events, chain intact\n", static_cast<long long>(check->events));
  return k_exit_ok;
}

}  // namespace dispatchd::cli
