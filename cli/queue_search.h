#pragma once
// dispatchctl queue search and queue history (docs/staff.md, "Search and history"): the
// staff API's search and a case's customer history, read from the database directly.
// Exit 0 done (an empty result included), 1 no such escalation, 2 usage.

#include <cstdint>

#include "cli/args.h"
#include "cli/target.h"
#include "store/inbox.h"

namespace dispatchd::cli {

// --customer --text --reason --status --from --to --before --limit [--json]; newest first.
int search_queue(Target& target, const Args& args, store::Time at);

// The customer of escalation `id`: their other cases with their resolutions, then a page of
// their messages across conversations with what was sent in answer (--before, --limit).
int show_history(Target& target, const Args& args, std::int64_t id);

}  // namespace dispatchd::cli
