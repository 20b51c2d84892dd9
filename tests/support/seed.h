#pragma once
// A small, realistic history written through the store's own functions: replies sent,
// re-asks, a contract failure, a model escalation, a staff edit, a failed send, a Gmail
// thread and a message still waiting. Used by the CLI tests, the audit queries' test
// (tests/docs/audit_queries_test.py) and anyone who wants a database to look at (tests/support/seed_main.cpp).

#include <expected>
#include <string>

#include "store/database.h"
#include "store/inbox.h"

namespace dispatchd::test {

// The first message arrives at `start`; the history spans two days. Expects a migrated,
// empty database.
std::expected<void, std::string> seed_history(store::Database& db, store::Time start);

}  // namespace dispatchd::test
