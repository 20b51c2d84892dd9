#include "store/media.h"

#include "common/json_out.h"
#include "common/utf8.h"
#include "store/audit.h"
#include "store/internal/sql.h"
#include "store/migrations.h"
#include "store/transaction.h"

namespace dispatchd::store {
namespace {

constexpr std::string_view k_select =
    "SELECT m.id, m.message_id, m.position, i.channel, m.kind, m.provider_ref, m.declared_type, m.declared_sha256,"
    " m.filename, m.voice, m.state, m.reason, m.attempts, m.size, b.digest, m.sniffed_type, m.type_mismatch,"
    " m.created_at, m.fetched_at, m.transcript_state, m.transcript, m.transcript_reason, m.transcript_attempts"
    " FROM media m JOIN inbox i ON i.id = m.message_id LEFT JOIN media_blobs b ON b.id = m.blob_id";

Result<MediaRow> row_of(const Query& q) {
  MediaRow r;
  r.id = q.integer(0);
  r.message_id = q.integer(1);
  r.position = static_cast<int>(q.integer(2));
  r.channel = q.text(3);
  auto kind = q.state<MediaKind>(4);
  if (!kind) return std::unexpected(kind.error());
  r.kind = *kind;
  r.provider_ref = q.text(5);
  r.declared_type = q.text(6);
  r.declared_sha256 = q.text(7);
  r.filename = q.text(8);
  r.voice = q.integer(9) != 0;
  auto state = q.state<MediaState>(10);
  if (!state) return std::unexpected(state.error());
  r.state = *state;
  r.reason = q.text(11);
  r.attempts = static_cast<int>(q.integer(12));
  r.size = q.optional_integer(13);
  r.sha256 = q.text(14);
  r.sniffed_type = q.text(15);
  r.type_mismatch = q.integer(16) != 0;
  r.created_at = q.text(17);
  r.fetched_at = q.text(18);
  auto transcript = q.state<TranscriptState>(19);
  if (!transcript) return std::unexpected(transcript.error());
  r.transcript_state = *transcript;
  r.transcript = q.text(20);
  r.transcript_reason = q.text(21);
  r.transcript_attempts = static_cast<int>(q.integer(22));
  return r;
}

Error no_media(std::int64_t id) { return Error::not_found("no media " + std::to_string(id)); }

// The blob an unfinished fetch of `media_id` left (its chunks go with it).
Result<void> drop_staged(Database& db, std::int64_t media_id) {
  auto drop = Query::prepare(db, "DELETE FROM media_blobs WHERE writer = ? AND digest IS NULL");
  if (!drop) return std::unexpected(drop.error());
  drop->bind(1, media_id);
  return drop->run();
}

// A pending file, read for an update that needs it to be pending.
Result<MediaRow> pending(Database& db, std::int64_t media_id) {
  auto row = find_media(db, media_id);
  if (!row) return std::unexpected(row.error());
  if (row->state != MediaState::pending)
    return std::unexpected(Error::refused("media " + std::to_string(media_id) + " is " +
                                          std::string(to_sql(row->state)) + ", not pending"));
  return row;
}

Result<void> audit_final(Database& db, const MediaRow& row, MediaState state, Time now, const std::string& reason,
                         const FetchedMedia* fetched, std::int64_t size) {
  JsonOut detail;
  detail.begin_object().field("media", row.id).field("kind", to_sql(row.kind)).field("state", to_sql(state));
  if (fetched) {
    detail.field("bytes", size).field("sha256", fetched->sha256).field("content_type", row.declared_type);
    detail.field("sniffed", fetched->sniffed_type).field("mismatch", fetched->type_mismatch);
  } else {
    detail.field("reason", reason);
  }
  detail.end_object();
  auto appended = append_audit(db, {format_time(now), AuditKind::media, row.message_id, "dispatchd", detail.str()});
  if (!appended) return std::unexpected(appended.error());
  return {};
}

// A file whose transcript is pending, read for an update that needs it to be.
Result<MediaRow> transcript_pending(Database& db, std::int64_t media_id) {
  auto row = find_media(db, media_id);
  if (!row) return std::unexpected(row.error());
  if (row->transcript_state != TranscriptState::pending)
    return std::unexpected(Error::refused("the transcript of media " + std::to_string(media_id) + " is " +
                                          std::string(to_sql(row->transcript_state)) + ", not pending"));
  return row;
}

// Ends a pending transcript as `state` (done with `text`, or failed with `reason`), audited.
Result<void> end_transcript(Database& db, std::int64_t media_id, TranscriptState state, const std::string& text,
                            const std::string& reason, Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    auto row = transcript_pending(db, media_id);
    if (!row) return std::unexpected(row.error());
    const bool done = state == TranscriptState::done;
    auto update = Query::prepare(db,
                                 "UPDATE media SET transcript_state = ?, transcript = ?, transcript_reason = ?,"
                                 " transcribed_at = ?, transcript_lease_owner = NULL,"
                                 " transcript_lease_expires_at = NULL WHERE id = ?");
    if (!update) return std::unexpected(update.error());
    const auto or_null = [](bool set, const std::string& s) {
      return set ? std::optional<std::string>(s) : std::nullopt;
    };
    update->bind(1, state).bind(2, or_null(done, text)).bind(3, or_null(!done, reason));
    update->bind(4, format_time(now)).bind(5, media_id);
    DISPATCHD_TRY(update->run());
    JsonOut detail;
    detail.begin_object().field("media", row->id).field("state", to_sql(state));
    if (done) {
      detail.field("chars", static_cast<std::int64_t>(utf8::code_points(text))).field("sha256", sha256_hex(text));
    } else {
      detail.field("attempts", static_cast<std::int64_t>(row->transcript_attempts)).field("reason", reason);
    }
    detail.end_object();
    auto appended =
        append_audit(db, {format_time(now), AuditKind::transcript, row->message_id, "dispatchd", detail.str()});
    if (!appended) return std::unexpected(appended.error());
    return {};
  });
}

// "UPDATE media SET `set` WHERE id = (the oldest file `where` picks) RETURNING id", for
// claim_one; PostgreSQL skips the rows another instance is claiming.
std::string claim_sql(Backend backend, std::string_view set, std::string_view where) {
  return "UPDATE media SET " + std::string(set) + " WHERE id = (SELECT id FROM media WHERE " + std::string(where) +
         " ORDER BY id LIMIT 1" + (backend == Backend::postgresql ? " FOR UPDATE SKIP LOCKED" : "") + ") RETURNING id";
}

// Runs `sql` (claim_sql's: ?1 the worker, ?2 the lease's end, ?3 now) in a transaction of its
// own: the claimed row, after `then` ran on its id; nullopt when none is due.
Result<std::optional<MediaRow>> claim_one(Database& db, const std::string& sql, const std::string& worker, Time now,
                                          std::chrono::seconds lease,
                                          const std::function<Result<void>(std::int64_t id)>& then) {
  return transaction<std::optional<MediaRow>>(db, [&]() -> Result<std::optional<MediaRow>> {
    auto claim = Query::prepare(db, sql);
    if (!claim) return std::unexpected(claim.error());
    claim->bind(1, worker).bind(2, format_time(now + lease)).bind(3, format_time(now));
    auto claimed = claim->insert_returning_id();
    if (!claimed) return std::unexpected(claimed.error());
    if (!*claimed) return std::optional<MediaRow>();
    DISPATCHD_TRY(then(**claimed));
    auto row = find_media(db, **claimed);
    if (!row) return std::unexpected(row.error());
    return std::optional<MediaRow>(std::move(*row));
  });
}

}  // namespace

bool awaiting_transcript(const MediaRow& row) { return row.transcript_state == TranscriptState::pending; }

Result<void> insert_media(Database& db, std::int64_t message_id, const std::vector<MediaRef>& files, Time now) {
  const std::string at = format_time(now);
  for (std::size_t i = 0; i < files.size(); ++i) {
    const MediaRef& f = files[i];
    auto insert = Query::prepare(db,
                                 "INSERT INTO media(message_id, position, kind, provider_ref, declared_type,"
                                 " declared_sha256, filename, voice, created_at) VALUES (?,?,?,?,?,?,?,?,?)");
    if (!insert) return std::unexpected(insert.error());
    const auto or_null = [](const std::string& s) { return s.empty() ? std::nullopt : std::optional<std::string>(s); };
    insert->bind(1, message_id).bind(2, static_cast<std::int64_t>(i)).bind(3, f.kind).bind(4, f.provider_ref);
    insert->bind(5, f.declared_type).bind(6, or_null(f.declared_sha256)).bind(7, or_null(f.filename));
    insert->bind(8, f.voice ? 1 : 0).bind(9, at);
    DISPATCHD_TRY(insert->run());
  }
  return {};
}

Result<std::optional<MediaRow>> claim_media(Database& db, const std::string& worker, Time now,
                                            std::chrono::seconds lease) {
  const std::string& sql = per_backend(db.backend(), [](Backend b) {
    return claim_sql(b, "lease_owner = ?1, lease_expires_at = ?2, attempts = attempts + 1",
                     "state = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at <= ?3) AND"
                     " (lease_expires_at IS NULL OR lease_expires_at <= ?3)");
  });
  return claim_one(db, sql, worker, now, lease, [&db](std::int64_t id) { return drop_staged(db, id); });
}

Result<void> release_media_leases(Database& db, const std::string& worker) {
  auto update = Query::prepare(db,
                               "UPDATE media SET lease_owner = NULL, lease_expires_at = NULL"
                               " WHERE state = 'pending' AND lease_owner = ?");
  if (!update) return std::unexpected(update.error());
  update->bind(1, worker);
  DISPATCHD_TRY(update->run());
  auto transcripts = Query::prepare(db,
                                    "UPDATE media SET transcript_lease_owner = NULL, transcript_lease_expires_at = NULL"
                                    " WHERE transcript_state = 'pending' AND transcript_lease_owner = ?");
  if (!transcripts) return std::unexpected(transcripts.error());
  transcripts->bind(1, worker);
  return transcripts->run();
}

Result<void> retry_media(Database& db, std::int64_t media_id, Time next_attempt_at, const std::string& reason) {
  auto update = Query::prepare(db,
                               "UPDATE media SET next_attempt_at = ?, reason = ?, lease_owner = NULL,"
                               " lease_expires_at = NULL WHERE id = ? AND state = 'pending'");
  if (!update) return std::unexpected(update.error());
  update->bind(1, format_time(next_attempt_at)).bind(2, reason).bind(3, media_id);
  DISPATCHD_TRY(update->run());
  if (update->changes() == 0) return std::unexpected(no_media(media_id));
  return {};
}

Result<void> refuse_media(Database& db, std::int64_t media_id, MediaState state, const std::string& reason, Time now) {
  if (state != MediaState::over_cap && state != MediaState::unfetchable && state != MediaState::expired &&
      state != MediaState::mismatch)
    return std::unexpected(Error::internal("a file is not refused as " + std::string(to_sql(state))));
  return transaction<void>(db, [&]() -> Result<void> {
    auto row = pending(db, media_id);
    if (!row) return std::unexpected(row.error());
    DISPATCHD_TRY(drop_staged(db, media_id));
    auto update = Query::prepare(db,
                                 "UPDATE media SET state = ?, reason = ?, fetched_at = ?, lease_owner = NULL,"
                                 " lease_expires_at = NULL WHERE id = ?");
    if (!update) return std::unexpected(update.error());
    update->bind(1, state).bind(2, reason).bind(3, format_time(now)).bind(4, media_id);
    DISPATCHD_TRY(update->run());
    return audit_final(db, *row, state, now, reason, nullptr, 0);
  });
}

Result<BlobWriter> BlobWriter::begin(Database& db, std::int64_t media_id, Time now) {
  auto insert = Query::prepare(db, "INSERT INTO media_blobs(writer, created_at) VALUES (?, ?) RETURNING id");
  if (!insert) return std::unexpected(insert.error());
  insert->bind(1, media_id).bind(2, format_time(now));
  auto id = insert->inserted_id();
  if (!id) return std::unexpected(id.error());
  return BlobWriter(db, *id);
}

Result<void> BlobWriter::append(std::string_view chunk) {
  if (chunk.size() > k_media_chunk_bytes)
    return std::unexpected(Error::internal("a media chunk of " + std::to_string(chunk.size()) + " bytes"));
  if (chunk.empty()) return {};
  auto insert = Query::prepare(*m_db, "INSERT INTO media_chunks(blob_id, seq, data) VALUES (?, ?, ?)");
  if (!insert) return std::unexpected(insert.error());
  insert->bind(1, m_blob_id).bind(2, m_seq).bind_blob(3, chunk);
  DISPATCHD_TRY(insert->run());
  ++m_seq;
  m_size += static_cast<std::int64_t>(chunk.size());
  return {};
}

Result<void> finish_media(Database& db, std::int64_t media_id, const BlobWriter& writer, const FetchedMedia& fetched,
                          Time now) {
  return transaction<void>(db, [&]() -> Result<void> {
    auto row = pending(db, media_id);
    if (!row) return std::unexpected(row.error());
    auto staged = Query::prepare(db, "SELECT 1 FROM media_blobs WHERE id = ? AND writer = ? AND digest IS NULL");
    if (!staged) return std::unexpected(staged.error());
    staged->bind(1, writer.blob_id()).bind(2, media_id);
    auto found = staged->step();
    if (!found) return std::unexpected(found.error());
    if (!*found)
      return std::unexpected(
          Error::refused("the bytes of media " + std::to_string(media_id) + " are gone (fetched again meanwhile)"));
    DISPATCHD_TRY(staged->run());
    std::int64_t blob = writer.blob_id();
    auto same = Query::prepare(db, "SELECT id FROM media_blobs WHERE digest = ?");
    if (!same) return std::unexpected(same.error());
    same->bind(1, fetched.sha256);
    auto existing = same->step();
    if (!existing) return std::unexpected(existing.error());
    if (*existing) {
      blob = same->integer(0);
      DISPATCHD_TRY(same->run());
      DISPATCHD_TRY(drop_staged(db, media_id));
    } else {
      auto keep = Query::prepare(db, "UPDATE media_blobs SET digest = ?, size = ?, writer = NULL WHERE id = ?");
      if (!keep) return std::unexpected(keep.error());
      keep->bind(1, fetched.sha256).bind(2, writer.size()).bind(3, blob);
      DISPATCHD_TRY(keep->run());
    }
    auto update = Query::prepare(db,
                                 "UPDATE media SET state = 'stored', blob_id = ?, size = ?, sniffed_type = ?,"
                                 " type_mismatch = ?, reason = NULL, fetched_at = ?, lease_owner = NULL,"
                                 " lease_expires_at = NULL, transcript_state = ? WHERE id = ?");
    if (!update) return std::unexpected(update.error());
    update->bind(1, blob).bind(2, writer.size()).bind(3, fetched.sniffed_type);
    update->bind(4, fetched.type_mismatch ? 1 : 0).bind(5, format_time(now));
    update->bind(6, fetched.transcribe ? TranscriptState::pending : TranscriptState::none).bind(7, media_id);
    DISPATCHD_TRY(update->run());
    return audit_final(db, *row, MediaState::stored, now, {}, &fetched, writer.size());
  });
}

Result<std::optional<MediaRow>> claim_transcript(Database& db, const std::string& worker, Time now,
                                                 std::chrono::seconds lease) {
  const std::string& sql = per_backend(db.backend(), [](Backend b) {
    return claim_sql(b,
                     "transcript_lease_owner = ?1, transcript_lease_expires_at = ?2,"
                     " transcript_attempts = transcript_attempts + 1",
                     "transcript_state = 'pending' AND state = 'stored' AND (transcript_next_at IS NULL OR"
                     " transcript_next_at <= ?3) AND (transcript_lease_expires_at IS NULL OR"
                     " transcript_lease_expires_at <= ?3)");
  });
  return claim_one(db, sql, worker, now, lease, [](std::int64_t) { return Result<void>(); });
}

Result<void> retry_transcript(Database& db, std::int64_t media_id, Time next_attempt_at, const std::string& reason) {
  auto update = Query::prepare(db,
                               "UPDATE media SET transcript_next_at = ?, transcript_reason = ?,"
                               " transcript_lease_owner = NULL, transcript_lease_expires_at = NULL"
                               " WHERE id = ? AND transcript_state = 'pending'");
  if (!update) return std::unexpected(update.error());
  update->bind(1, format_time(next_attempt_at)).bind(2, reason).bind(3, media_id);
  DISPATCHD_TRY(update->run());
  if (update->changes() == 0) return std::unexpected(no_media(media_id));
  return {};
}

Result<void> finish_transcript(Database& db, std::int64_t media_id, const std::string& text, Time now) {
  return end_transcript(db, media_id, TranscriptState::done, text, {}, now);
}

Result<void> fail_transcript(Database& db, std::int64_t media_id, const std::string& reason, Time now) {
  return end_transcript(db, media_id, TranscriptState::failed, {}, reason, now);
}

Result<MediaRow> find_media(Database& db, std::int64_t media_id) {
  auto q = Query::prepare(db, std::string(k_select) + " WHERE m.id = ?");
  if (!q) return std::unexpected(q.error());
  q->bind(1, media_id);
  auto row = q->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::unexpected(no_media(media_id));
  auto out = row_of(*q);
  if (out) DISPATCHD_TRY(q->run());
  return out;
}

Result<std::vector<MediaRow>> list_media(Database& db, std::int64_t message_id) {
  auto q = Query::prepare(db, std::string(k_select) + " WHERE m.message_id = ? ORDER BY m.position");
  if (!q) return std::unexpected(q.error());
  q->bind(1, message_id);
  std::vector<MediaRow> out;
  while (true) {
    auto row = q->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    auto read = row_of(*q);
    if (!read) return std::unexpected(read.error());
    out.push_back(std::move(*read));
  }
}

Result<void> read_media(Database& db, std::int64_t media_id, const std::function<bool(std::string_view)>& chunk) {
  auto row = find_media(db, media_id);
  if (!row) return std::unexpected(row.error());
  if (row->state != MediaState::stored)
    return std::unexpected(Error::not_found("media " + std::to_string(media_id) + " is " +
                                            std::string(to_sql(row->state)) + ": no bytes are kept"));
  auto blob = Query::prepare(db, "SELECT blob_id FROM media WHERE id = ?");
  if (!blob) return std::unexpected(blob.error());
  blob->bind(1, media_id);
  auto found = blob->step();
  if (!found) return std::unexpected(found.error());
  if (!*found) return std::unexpected(no_media(media_id));
  const std::int64_t blob_id = blob->integer(0);
  DISPATCHD_TRY(blob->run());
  // One chunk a statement: a result set is held whole in memory by PostgreSQL's client.
  std::int64_t read = 0;
  for (std::int64_t seq = 0;; ++seq) {
    auto q = Query::prepare(db, "SELECT data FROM media_chunks WHERE blob_id = ? AND seq = ?");
    if (!q) return std::unexpected(q.error());
    q->bind(1, blob_id).bind(2, seq);
    auto next = q->step();
    if (!next) return std::unexpected(next.error());
    if (!*next) break;
    const std::string data = q->blob(0);
    read += static_cast<std::int64_t>(data.size());
    if (!chunk(data)) return {};
  }
  if (read != row->size.value_or(0))
    return std::unexpected(Error::internal("media " + std::to_string(media_id) + " has " + std::to_string(read) +
                                           " bytes of " + std::to_string(row->size.value_or(0))));
  return {};
}

Result<std::int64_t> stored_media_bytes(Database& db) {
  auto q = Query::prepare(db, "SELECT COALESCE(SUM(size), 0) FROM media_blobs WHERE digest IS NOT NULL");
  if (!q) return std::unexpected(q.error());
  auto row = q->step();
  if (!row) return std::unexpected(row.error());
  const std::int64_t total = *row ? q->integer(0) : 0;
  DISPATCHD_TRY(q->run());
  return total;
}

Result<std::int64_t> purge_media(Database& db, Time before, Time now) {
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    auto update = Query::prepare(db,
                                 "UPDATE media SET state = 'purged', blob_id = NULL, reason = ?"
                                 " WHERE state = 'stored' AND fetched_at < ?");
    if (!update) return std::unexpected(update.error());
    update->bind(1, "retention ended " + format_time(now)).bind(2, format_time(before));
    DISPATCHD_TRY(update->run());
    const std::int64_t purged = update->changes();
    auto dropped = drop_unused_media_blobs(db);
    if (!dropped) return std::unexpected(dropped.error());
    return purged;
  });
}

Result<std::int64_t> drop_unused_media_blobs(Database& db) {
  auto drop = Query::prepare(db,
                             "DELETE FROM media_blobs WHERE digest IS NOT NULL AND NOT EXISTS"
                             " (SELECT 1 FROM media m WHERE m.blob_id = media_blobs.id)");
  if (!drop) return std::unexpected(drop.error());
  DISPATCHD_TRY(drop->run());
  return drop->changes();
}

}  // namespace dispatchd::store
