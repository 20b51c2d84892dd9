#pragma once
// Retention: moves old, finished messages out of the live database into an archive SQLite
// file with the same schema and views, while dispatchd keeps running. The archive is a
// SQLite file on both engines (a PostgreSQL live database too).
//
// What moves: messages received before `before` (YYYY-MM-DD, UTC, against received_at)
// whose outcome is not pending, with no open or claimed escalation and no action in
// proposed, approved or sending — with their attempts, actions (the outbox rows),
// escalations and audit events. Ids are kept as they are, so they are never reused.
//
// The audit chain is one chain across messages; it is split as a prefix (archived) and a
// suffix (live), never with holes. A run walks the live chain from its anchor and stops at
// the first event of a message that must stay: everything before it moves, as long as
// every message touched there has all its events there too (the cut goes back to the
// last such point otherwise). So one message that stays (a pending one, an open
// escalation) holds back the finished messages whose events come after its first event;
// ArchiveResult says which message stopped the run and how many finished ones wait.
// A message holding a table's newest row (inbox, attempts, actions, escalations) stays
// too: SQLite gives a new row the largest id + 1, and deleting it would hand its id out
// again.
//
// Each batch of about `batch_messages` messages is two commits:
//   1. in one read snapshot of the live database: choose the batch, copy its rows into the
//      archive and commit the archive (synchronous=FULL: on disk). SQLite ATTACHes the
//      archive to the live connection; PostgreSQL (REPEATABLE READ) writes the rows
//      through the archive file's own connection;
//   2. one short live write transaction: check that the live rows still equal the copy,
//      delete them and advance the live anchor (audit_anchor, migration 0012). On
//      PostgreSQL it first locks audit_anchor (one run's commit at a time) and the batch's
//      inbox rows (a writer appending to one of those messages waits, then finds it gone).
// The anchor is the commit point. An archive event after the live anchor is a copy whose
// live delete did not commit (a crash, SIGKILL): the next run finishes it — deletes the
// rows from live when they are unchanged, or takes the copy out of the archive when the
// daemon changed them since. So an interrupted run loses nothing, and once a run has
// finished no message is in both places. The daemon's writers wait at most for one
// batch's delete (SQLite's busy timeout; PostgreSQL's row locks); the copy holds no live
// write lock.
//
// The archive file is created (or upgraded) by applying the same migrations up to the
// live database's version; an existing file is appended to when its chain ends at the
// live anchor. A new file for a database that was archived before starts at the live
// anchor (its own audit_anchor row). Anything else is refused.
//
// Metrics' counters (metric_counts) are not lowered: they count what dispatchd handled.
//
// Thread-safety: uses `live` for the whole call; one run at a time per live database
// (a second concurrent run's batches fail their commit check and are undone).

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "store/audit.h"
#include "store/database.h"
#include "store/error.h"
#include "store/migrations.h"

namespace dispatchd::store {

// Why a message stays live.
enum class HoldReason {
  pending,          // outcome pending: not finished
  open_escalation,  // an escalation open or claimed
  send_in_flight,   // an action proposed, approved or sending
  too_recent,       // received on or after the day (for an event of no message: written then)
  newest_row,       // it holds a table's newest row (ids are never reused)
};

std::string_view to_string(HoldReason reason);

struct ArchiveProgress {
  std::int64_t messages = 0;      // moved so far by this run
  std::int64_t audit_events = 0;  // moved so far by this run
  std::int64_t anchor_id = 0;     // the live anchor now
};

struct ArchiveOptions {
  std::string before;  // "YYYY-MM-DD" (the caller checks it is a real day; refused unless so shaped)
  std::size_t batch_messages = 500;
  std::vector<Migration> migrations;  // SQLite's schema files (load_migrations(root)), to create or upgrade the archive
  std::string now;                    // ISO 8601 UTC, recorded with the anchor
  // Called after each committed batch (progress, a pause to leave the daemon room).
  std::function<void(const ArchiveProgress&)> after_batch;
};

struct ArchiveResult {
  ArchiveProgress moved;                   // by this run
  std::int64_t recovered_messages = 0;     // of an interrupted run, deleted from live now
  std::int64_t undone_messages = 0;        // copies taken back out of the archive (changed live)
  std::optional<std::int64_t> stopped_at;  // the message whose event ended the walk
  std::optional<HoldReason> stop_reason;   // why it stays
  std::int64_t held_back = 0;              // finished messages before the day still live
};

// Archives into the SQLite file at `archive_path`. REQUIRES: `live` is not in a
// transaction. Errors: `refused` for an archive that does not continue this database's
// chain or a schema newer than the live one; busy/io/full as the store's (retryable: the
// next run resumes).
[[nodiscard]] Result<ArchiveResult> archive_before(Database& live, const std::string& archive_path,
                                                   const ArchiveOptions& options);

}  // namespace dispatchd::store
