#include "store/tools/erase.h"

#include <cctype>
#include <initializer_list>
#include <vector>

#include "common/json_out.h"
#include "store/audit.h"
#include "store/audit_digest.h"
#include "store/internal/sql.h"
#include "store/media.h"
#include "store/migrations.h"

namespace dispatchd::store {
namespace {

constexpr std::string_view k_erased_text = "[erased]";
// Below this length a counterpart could be part of unrelated text (an id, a count): audit
// details are then erased by message only, not by searching for it.
constexpr std::size_t k_min_searched = 6;
// wal_checkpoint(TRUNCATE) waits for readers up to the busy timeout each time.
constexpr int k_checkpoint_tries = 3;

// What an erasure covers: the counterpart's messages (a JSON array of ids, bound to ?1:
// in_messages), the counterpart (?2) and its digest (?3).
struct Scope {
  Backend backend = Backend::sqlite;
  std::string messages;
  std::string counterpart;
  std::string digest;
  std::string salt;             // this erasure's, never stored
  std::string digest_channels;  // EraseRequest::digest_provider_ids_of as a SQL list: "('a', 'b')"
};

std::string in_messages(const Scope& s) {
  return "IN (SELECT value FROM " + sql::json_integers(s.backend, "?1", "j") + ")";
}

std::string erased_id(const Scope& s, std::string_view value) {
  return "erased:" + sha256_hex(s.salt + std::string(value));
}

Result<std::string> message_ids(Database& db, const std::string& counterpart) {
  auto rows = Query::prepare(db, per_backend(db.backend(), [](Backend b) {
                               return "SELECT " + sql::json_integer_array(b, "id", "id") +
                                      " FROM (SELECT id FROM inbox WHERE sender = ? ORDER BY id) AS m";
                             }));
  if (!rows) return std::unexpected(rows.error());
  rows->bind(1, counterpart);
  DISPATCHD_TRY(rows->step());
  return rows->text(0);
}

// Runs `sql` with the scope bound (?1 messages, ?2 counterpart, ?3 digest); the rows changed.
Result<std::int64_t> run_scoped(Database& db, const std::string& sql, const Scope& s) {
  auto update = Query::prepare(db, sql);
  if (!update) return std::unexpected(update.error());
  update->bind(1, s.messages).bind(2, s.counterpart).bind(3, s.digest);
  DISPATCHD_TRY(update->run());
  return update->changes();
}

// What the agent or staff have not finished with the counterpart, one line each.
Result<std::vector<std::string>> unfinished(Database& db, const Scope& s) {
  const std::string in = in_messages(s);
  auto rows = Query::prepare(
      db, "SELECT 'message ' || id || ' is ' || state FROM inbox WHERE id " + in +
              " AND state IN ('received', 'processing', 'decided')"
              " UNION ALL SELECT 'action ' || id || ' of message ' || message_id || ' is ' || status FROM actions"
              " WHERE (message_id " +
              in +
              " OR recipient = ?2) AND status IN ('proposed', 'approved', 'sending')"
              " UNION ALL SELECT 'escalation ' || id || ' of message ' || message_id || ' is ' || status"
              " FROM escalations WHERE message_id " +
              in + " AND status IN ('open', 'claimed')");
  if (!rows) return std::unexpected(rows.error());
  rows->bind(1, s.messages).bind(2, s.counterpart);
  std::vector<std::string> out;
  while (true) {
    auto row = rows->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    out.push_back(rows->text(0));
  }
}

// Replaces each provider id that `select` finds ((id, provider_message_id) rows, scope
// bound) with its own digest through `update` (?1 the digest, ?2 the row id).
Result<void> digest_provider_ids(Database& db, const std::string& select, const std::string& update, const Scope& s) {
  std::vector<std::pair<std::int64_t, std::string>> found;
  {
    auto rows = Query::prepare(db, select);
    if (!rows) return std::unexpected(rows.error());
    rows->bind(1, s.messages).bind(2, s.counterpart);
    while (true) {
      auto row = rows->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) break;
      found.emplace_back(rows->integer(0), rows->text(1));
    }
  }
  for (const auto& [id, value] : found) {
    auto write = Query::prepare(db, update);
    if (!write) return std::unexpected(write.error());
    write->bind(1, erased_id(s, value)).bind(2, id);
    DISPATCHD_TRY(write->run());
  }
  return {};
}

Result<void> erase_provider_ids(Database& db, const Scope& s) {
  const std::string in = in_messages(s);
  DISPATCHD_TRY(digest_provider_ids(db,
                                    "SELECT id, provider_message_id FROM inbox WHERE id " + in + " AND channel IN " +
                                        s.digest_channels + " AND provider_message_id NOT LIKE 'erased:%'",
                                    "UPDATE inbox SET provider_message_id = ?1 WHERE id = ?2", s));
  return digest_provider_ids(db,
                             "SELECT a.id, a.provider_message_id FROM actions a JOIN inbox m ON m.id = a.message_id"
                             " WHERE (a.message_id " +
                                 in + " OR a.recipient = ?2) AND m.channel IN " + s.digest_channels +
                                 " AND a.provider_message_id IS NOT NULL AND a.provider_message_id NOT LIKE 'erased:%'",
                             "UPDATE actions SET provider_message_id = ?1 WHERE id = ?2", s);
}

// The rows to erase: those of the counterpart's messages, and (for a counterpart long
// enough to search for) any row whose `columns` contain it: e.g. a model output or a
// proposal in another conversation that was addressed to them.
std::string scope_of(std::string_view message_column, std::initializer_list<std::string_view> columns, const Scope& s) {
  std::string where = "(" + std::string(message_column) + " " + in_messages(s);
  if (s.counterpart.size() >= k_min_searched) {
    for (const auto column : columns) where += " OR " + sql::contains(s.backend, column, "?2");
  }
  return where + ")";
}

Result<std::int64_t> erase_audit(Database& db, const Scope& s) {
  const std::string where = scope_of("message_id", {"detail"}, s);
  auto legacy = Query::prepare(db, "SELECT id FROM audit WHERE " + where + " AND detail_digest IS NULL LIMIT 1");
  if (!legacy) return std::unexpected(legacy.error());
  legacy->bind(1, s.messages).bind(2, s.counterpart);
  auto row = legacy->step();
  if (!row) return std::unexpected(row.error());
  if (*row) {
    return std::unexpected(Error::refused("audit event " + std::to_string(legacy->integer(0)) +
                                          " names the counterpart and is hashed with the formula before migration "
                                          "0013 (its detail is in its hash): it cannot be erased"));
  }
  return run_scoped(db,
                    "UPDATE audit SET salt = NULL, detail = '" + std::string(k_erased_detail) + "' WHERE " + where +
                        " AND salt IS NOT NULL",
                    s);
}

Result<EraseResult> erase_rows(Database& db, const Scope& s) {
  const std::string in = in_messages(s);
  const std::string text = "'" + std::string(k_erased_text) + "'";
  const std::string json = "'" + std::string(k_erased_detail) + "'";
  const auto blank = [&](std::string_view column, const std::string& with) {
    return std::string(column) + " = CASE WHEN " + std::string(column) + " IS NULL THEN NULL ELSE " + with + " END";
  };
  EraseResult r;
  r.digest = s.digest;
  DISPATCHD_TRY(erase_provider_ids(db, s));
  auto counted = run_scoped(db,
                            "UPDATE attempts SET " + blank("raw_output", text) + ", errors = '[]' WHERE " +
                                scope_of("message_id", {"raw_output", "errors"}, s),
                            s);
  if (!counted) return std::unexpected(counted.error());
  r.attempts = *counted;
  counted = run_scoped(db,
                       "UPDATE actions SET arguments = " + json + ", " + blank("body", text) + ", " +
                           blank("error", text) + ", " + blank("follow_up", text) +
                           ", recipient = CASE WHEN recipient IS NULL THEN NULL WHEN recipient = ?2 THEN ?3 ELSE " +
                           text + " END WHERE recipient = ?2 OR " +
                           scope_of("message_id", {"arguments", "body", "error", "follow_up"}, s),
                       s);
  if (!counted) return std::unexpected(counted.error());
  r.actions = *counted;
  counted = run_scoped(db,
                       "UPDATE escalations SET " + blank("detail", json) + ", " + blank("proposed_action", json) +
                           ", " + blank("resolution", text) + " WHERE " +
                           scope_of("message_id", {"detail", "proposed_action", "resolution"}, s),
                       s);
  if (!counted) return std::unexpected(counted.error());
  r.escalations = *counted;
  // Staff's notes on those escalations (migration 0026) may quote the customer.
  DISPATCHD_TRY(run_scoped(
      db, "UPDATE escalation_notes SET text = " + text + " WHERE " + scope_of("message_id", {"text"}, s), s));
  counted = erase_audit(db, s);
  if (!counted) return std::unexpected(counted.error());
  r.audit_events = *counted;
  // Their files (store/media.h): the bytes go (a blob another customer's file also uses
  // stays), and a fetch still under way finds its file erased and its staged bytes gone.
  DISPATCHD_TRY(run_scoped(db,
                           "DELETE FROM media_blobs WHERE digest IS NULL AND writer IN (SELECT id FROM media"
                           " WHERE message_id " +
                               in + ")",
                           s));
  counted = run_scoped(db,
                       "UPDATE media SET state = 'erased', blob_id = NULL, provider_ref = " + text +
                           ", filename = NULL, declared_sha256 = NULL, reason = NULL, lease_owner = NULL,"
                           " lease_expires_at = NULL, transcript = NULL, transcript_reason = NULL,"
                           " transcript_lease_owner = NULL, transcript_lease_expires_at = NULL, transcript_state ="
                           " CASE WHEN transcript_state = 'pending' THEN 'failed' ELSE transcript_state END"
                           " WHERE message_id " +
                           in,
                       s);
  if (!counted) return std::unexpected(counted.error());
  r.media_files = *counted;
  auto blobs = drop_unused_media_blobs(db);
  if (!blobs) return std::unexpected(blobs.error());
  // Last: the scope finds the messages by id, not by sender.
  counted =
      run_scoped(db,
                 "UPDATE inbox SET text = " + text + ", raw_payload = " + text +
                     ", raw_encoding = NULL, sender = ?3, conversation_id = CASE WHEN conversation_id = ?2 THEN ?3"
                     " ELSE conversation_id END WHERE id " +
                     in,
                 s);
  if (!counted) return std::unexpected(counted.error());
  r.messages = *counted;
  // The spend counters per conversation (migration 0025) name the conversation as the inbox did.
  auto spend = Query::prepare(db, "UPDATE spend_conversation_days SET conversation_id = ?1 WHERE conversation_id = ?2");
  if (!spend) return std::unexpected(spend.error());
  spend->bind(1, s.digest).bind(2, s.counterpart);
  DISPATCHD_TRY(spend->run());
  return r;
}

std::string erased_detail(const EraseResult& r) {
  return JsonOut()
      .begin_object()
      .field("counterpart", r.digest)
      .field("messages", r.messages)
      .field("attempts", r.attempts)
      .field("actions", r.actions)
      .field("escalations", r.escalations)
      .field("audit_events", r.audit_events)
      .field("media_files", r.media_files)
      .end_object()
      .str();
}

Result<EraseResult> erase_in_transaction(Database& db, const EraseRequest& request, Time now) {
  Scope s;
  s.backend = db.backend();
  s.counterpart = normalize_counterpart(request.counterpart);
  s.digest_channels = sql::text_list(request.digest_provider_ids_of);
  auto salt = new_audit_salt();
  if (!salt) return std::unexpected(salt.error());
  s.salt = *salt;
  s.digest = erased_id(s, s.counterpart);
  return transaction<EraseResult>(db, [&]() -> Result<EraseResult> {
    auto ids = message_ids(db, s.counterpart);
    if (!ids) return std::unexpected(ids.error());
    if (*ids == "[]") return std::unexpected(Error::not_found("no message from " + s.counterpart + " in the inbox"));
    s.messages = *ids;
    auto open = unfinished(db, s);
    if (!open) return std::unexpected(open.error());
    if (!open->empty()) {
      std::string list;
      for (const auto& line : *open) list += (list.empty() ? "" : "; ") + line;
      return std::unexpected(Error::refused("not finished yet, nothing erased: " + list +
                                            " (erase once the agent and staff are done with them)"));
    }
    auto erased = erase_rows(db, s);
    if (!erased) return std::unexpected(erased.error());
    DISPATCHD_TRY(
        append_audit(db, {format_time(now), AuditKind::erased, std::nullopt, request.actor, erased_detail(*erased)}));
    erased->audit_id = internal::Access::audit_tail(db) ? internal::Access::audit_tail(db)->id : 0;
    return erased;
  });
}

// PostgreSQL: VACUUM FULL rewrites the tables without the old row versions; the server's
// WAL (and any archive of it) keeps them until it recycles its segments, which is the
// server's to do, not ours: never `wal_truncated`, and the problem says so.
EraseResult::Scrub scrub_postgresql(Database& db, bool vacuum) {
  EraseResult::Scrub r;
  if (vacuum) {
    auto done = internal::exec(
        db, "VACUUM (FULL) inbox, attempts, actions, escalations, audit, media, media_blobs, media_chunks");
    r.vacuumed = done.has_value();
    if (!done) r.problem = "VACUUM failed (" + done.error().message + "); ";
  }
  r.problem += "the old row versions stay in PostgreSQL's WAL until the server recycles it";
  return r;
}

// VACUUM (unless skipped), then the WAL's checkpoint and truncation.
EraseResult::Scrub scrub(Database& db, bool vacuum) {
  if (db.backend() == Backend::postgresql) return scrub_postgresql(db, vacuum);
  EraseResult::Scrub r;
  std::string problems;
  if (vacuum) {
    // VACUUM builds the new file in a temporary database: on disk, not in memory.
    auto done = internal::exec(db, "PRAGMA temp_store=FILE");
    if (done) done = internal::exec(db, "VACUUM");
    r.vacuumed = done.has_value();
    if (!done) problems = "VACUUM failed (" + done.error().message + "); ";
    if (auto back = internal::exec(db, "PRAGMA temp_store=MEMORY"); !back) problems += back.error().message + "; ";
  }
  std::string last;
  for (int i = 0; i < k_checkpoint_tries && !r.wal_truncated; ++i) {
    auto busy = internal::query_int(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    if (busy && *busy == 0) r.wal_truncated = true;
    last = busy ? "readers kept the WAL busy" : busy.error().message;
  }
  if (!r.wal_truncated) problems += "the WAL was not truncated: " + last;
  if (problems.ends_with("; ")) problems.resize(problems.size() - 2);
  r.problem = std::move(problems);
  return r;
}

// Runs `body` with secure_delete=ON, then sets it back as the connection had it. SQLite
// only: PostgreSQL has no such setting (its scrub is VACUUM FULL).
template <typename Body>
auto with_secure_delete(Database& db, Body&& body) -> decltype(body()) {
  if (db.backend() == Backend::postgresql) return body();
  auto before = internal::query_int(db, "PRAGMA secure_delete");
  if (!before) return std::unexpected(before.error());
  DISPATCHD_TRY(internal::exec(db, "PRAGMA secure_delete=ON"));
  auto result = body();
  // 0 off, 1 on, 2 fast.
  const char* restore = *before == 2 ? "PRAGMA secure_delete=FAST"
                        : *before    ? "PRAGMA secure_delete=ON"
                                     : "PRAGMA secure_delete=OFF";
  if (auto back = internal::exec(db, restore); !back && result) return std::unexpected(back.error());
  return result;
}

}  // namespace

std::string normalize_counterpart(std::string_view counterpart) {
  std::string out(counterpart);
  if (out.find('@') != std::string::npos) {
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  } else if (out.starts_with('+')) {
    out.erase(0, 1);
  }
  return out;
}

Result<EraseResult> erase_counterpart(Database& db, const EraseRequest& request, Time now) {
  if (db.in_transaction()) return std::unexpected(Error::internal("erase_counterpart runs outside any transaction"));
  return with_secure_delete(db, [&]() -> Result<EraseResult> {
    auto result = erase_in_transaction(db, request, now);
    if (result) result->scrub = scrub(db, request.vacuum);
    return result;
  });
}

EraseResult::Scrub scrub_free_space(Database& db, bool vacuum) {
  auto done = with_secure_delete(db, [&]() -> Result<EraseResult::Scrub> { return scrub(db, vacuum); });
  if (done) return *done;
  EraseResult::Scrub failed;
  failed.problem = done.error().message;
  return failed;
}

}  // namespace dispatchd::store
