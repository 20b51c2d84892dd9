#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/tools/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: the steps of one archive run (store/tools/archive.h), as each engine takes
// them. On SQLite the archive file is ATTACHed to the live connection and rows move by
// INSERT ... SELECT (store/tools/archive.cpp); on PostgreSQL the archive file is still SQLite, so
// the rows are read from the live server and written through the archive's own connection
// (store/tools/archive_copy.cpp). Both keep archive.h's two commits per batch: the archive's
// commit first, then the live delete and anchor in one live transaction, so that an archive
// event after the live anchor is always a copy whose live delete may not have committed.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/internal/sql.h"
#include "store/tools/archive.h"
#include "store/tools/internal/row_copy.h"  // read_transaction

namespace dispatchd::store::internal {

// The tables holding a message's rows, parents first: rows are copied in this order and
// deleted in the reverse one (foreign keys). `key` names the message; `since` is the
// schema version that made the table (a database, and so its archive, older than that has
// none).
struct ArchiveTable {
  const char* name;
  const char* key;
  int since = 1;
};
inline constexpr ArchiveTable k_archive_tables[] = {{"inbox", "id"},
                                                    {"escalations", "message_id"},
                                                    {"escalation_notes", "message_id", 26},
                                                    {"actions", "message_id"},
                                                    {"attempts", "message_id"},
                                                    {"tool_calls", "message_id", 20},
                                                    {"send_pricing", "message_id", 33},
                                                    {"media", "message_id", 36}};

// The schema version from which messages have files (migration 0036). Their bytes
// (media_blobs, media_chunks) are shared between messages (content-addressed): a batch
// copies those its files use (INSERT OR IGNORE: an earlier batch may have copied them),
// before the tables, and the live commit deletes the blobs no live file uses any more.
inline constexpr int k_media_since = 36;
// The blobs the files of the segment's messages use, in `schema`.
std::string segment_blobs(const char* schema);

// The tables of k_archive_tables a database at schema `version` has, in that order.
inline std::vector<ArchiveTable> archive_tables(int version) {
  std::vector<ArchiveTable> out;
  for (const auto& t : k_archive_tables)
    if (t.since <= version) out.push_back(t);
  return out;
}

// One batch as the chain walk found it: the audit segment (from, end] and its messages.
struct Walked {
  std::int64_t end = 0;
  std::int64_t messages = 0;
  std::optional<std::int64_t> stopped_at;
  std::optional<HoldReason> reason;
};

// What a live commit did: nothing changed (stale: the live rows are not the archived copy
// any more, undo the copy), or the messages and events deleted from live.
struct Committed {
  bool stale = false;
  std::int64_t messages = 0;
  std::int64_t events = 0;
};

class ArchiveSteps {
 public:
  virtual ~ArchiveSteps() = default;
  // Builds the copy statements after checking that both sides give each table the same
  // columns (rows are copied by name, never by position).
  [[nodiscard]] virtual Result<void> prepare() = 0;
  // In one read snapshot of the live database: walks the chain after `from`, copies the
  // batch into the archive and commits it there.
  [[nodiscard]] virtual Result<Walked> copy_batch(std::int64_t from) = 0;
  // In one live write transaction: when the live anchor is still `expected` and the live
  // rows are the archive's copy after it, deletes them from live and advances the anchor to
  // the archive's last event; stale otherwise.
  [[nodiscard]] virtual Result<Committed> commit_live(std::int64_t expected) = 0;
  // Takes the archive's events after `from`, and their messages' rows, back out of the
  // archive; returns how many messages.
  [[nodiscard]] virtual Result<std::int64_t> undo_copy(std::int64_t from) = 0;
};

// Walks the live chain after `from`, inside the caller's read transaction on `live`.
[[nodiscard]] Result<Walked> walk_chain(Database& live, const ArchiveOptions& options, std::int64_t from);

// The messages of the audit segment (?1, ?2] of `schema`'s audit: a batch is named by its segment.
std::string segment_messages(const char* schema);
// " WHERE <key> IN <segment_messages(schema)>".
std::string where_message(const ArchiveTable& t, const char* schema);

// Every row's first column, as text.
[[nodiscard]] Result<std::vector<std::string>> first_column(Query& q);

// What a live commit finishes: the segment (from, to] after the live anchor (0 at genesis)
// up to the archive's last event, which `last_archived`, run on `archive`, gives (0 for none).
struct Segment {
  std::int64_t from = 0;
  std::int64_t to = 0;
};
[[nodiscard]] Result<Segment> pending_segment(Database& live, Database& archive, std::string_view last_archived);

// Runs `sql` with the segment (from, to] bound as ?1 and ?2: its one integer (0 for no row),
// or nothing read.
[[nodiscard]] Result<std::int64_t> segment_int(Database& db, const std::string& sql, std::int64_t from,
                                               std::int64_t to);
[[nodiscard]] Result<void> segment_run(Database& db, const std::string& sql, std::int64_t from, std::int64_t to);

// Deletes `schema`'s audit events after `from` and every row of their messages, on a
// connection that sees the archive as `schema` (SQLite: "arch" when ATTACHed, "main" on
// its own). REQUIRES: inside a transaction on `db`. Returns how many messages.
[[nodiscard]] Result<std::int64_t> undo_archived(Database& db, const char* schema, std::int64_t from);

// PostgreSQL's steps. REQUIRES: `live` is on PostgreSQL; `archive` is the archive file's own
// (SQLite) connection, prepared by the caller (schema, chain start); both outlive the steps.
std::unique_ptr<ArchiveSteps> copying_steps(Database& live, Database& archive, const ArchiveOptions& options);

}  // namespace dispatchd::store::internal
