#pragma once
// The hash-chained audit trail. Each event stores sha256(prev_hash || canonical event), so
// an edited or deleted row breaks the chain at the first row after the change.
// Known limit: removing the newest rows leaves a shorter chain that still verifies; the
// count of events is reported so that it can be compared with an earlier run.
//
// Retention (store/tools/archive.h) moves the chain's oldest part, a prefix, to an archive file.
// A database then starts at its anchor (migration 0012): the id and hash of the last event
// it does not hold. Its first event chains to the anchor's hash instead of the genesis
// hash, and new events continue the ids after it even when every event was archived.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "store/database.h"
#include "store/error.h"
#include "store/states.h"

namespace dispatchd::store {

// An event to append.
struct AuditEvent {
  std::string at;  // ISO 8601 UTC
  AuditKind event = AuditKind::received;
  std::optional<std::int64_t> message_id;
  std::string actor;   // "dispatchd" or the staff member
  std::string detail;  // compact JSON
};

// A row's content as stored, its kind as text (what the chain's hash commits to;
// store/audit_digest.h): a row written by another version may name a kind this one does
// not know.
struct AuditRecord {
  std::string at;
  std::string event;
  std::optional<std::int64_t> message_id;
  std::string actor;
  std::string detail;
};

// Appends `event` after the newest row. REQUIRES: called inside the transaction of the
// change it describes, so both commit or neither does. Returns the new row's hash.
[[nodiscard]] Result<std::string> append_audit(Database& db, const AuditEvent& event);

// Appends one event in a transaction of its own (events that describe no other change,
// e.g. a configuration reload).
[[nodiscard]] Result<void> record_event(Database& db, const AuditEvent& event);

// Where the chain held by a database starts: after this event, which lives elsewhere.
struct AuditAnchor {
  std::int64_t last_id = 0;
  std::string last_hash;
};

// The database's anchor; nullopt when its chain starts at genesis (nothing archived, or a
// database older than migration 0012).
[[nodiscard]] Result<std::optional<AuditAnchor>> audit_anchor(Database& db);

// The newest event `db` holds, as (id, hash); nullopt when it holds none.
[[nodiscard]] Result<std::optional<AuditAnchor>> newest_audit_event(Database& db);

struct AuditCheck {
  std::int64_t events = 0;                   // rows checked
  std::optional<std::int64_t> first_broken;  // audit id of the first bad row
  std::string reason;                        // why that row is bad
  std::optional<AuditAnchor> anchor;         // verify_audit: where the checked chain started
};

// Recomputes the whole chain in id order, from the anchor's hash (genesis without one).
[[nodiscard]] Result<AuditCheck> verify_audit(Database& db);

// Recomputes the rows with ids in [from, to] (a segment, e.g. around one message's events):
// each row's hash, and each row's link to the row before it; the first row links to the
// newest row before `from`, else to the anchor's hash when `from` is after the anchor, else
// to the genesis hash. `events` counts the rows checked.
[[nodiscard]] Result<AuditCheck> verify_audit_range(Database& db, std::int64_t from, std::int64_t to);

// An archive file (store/tools/archive.h) checked against the live database: its own chain from
// its anchor, and where it meets the live chain.
enum class ArchiveLink {
  linked,    // the archive's last event is the live anchor: the live chain continues it
  overlap,   // the archive's last event is still live too, the same row (an archive run
             // stopped between its two commits; the next run deletes it from live)
  empty,     // the archive holds no event
  unlinked,  // neither: the archive does not end where the live chain starts
};

struct ArchiveCheck {
  AuditCheck archive;  // the archive's chain
  ArchiveLink link = ArchiveLink::unlinked;
  std::string detail;  // for people: where the two chains meet or why they do not
};

// Verifies `archive`'s chain and its link to `live`'s. Reads both; changes nothing.
[[nodiscard]] Result<ArchiveCheck> verify_audit_archive(Database& live, Database& archive);

// The hash before the first event.
inline constexpr const char* k_audit_genesis = "0000000000000000000000000000000000000000000000000000000000000000";

}  // namespace dispatchd::store
