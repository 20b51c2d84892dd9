#pragma once
// Customers' media kept in the store (migration 0036; docs/media.md): each file of an
// inbound message is a `media` row written with the message, fetched afterwards, and its
// bytes kept content-addressed (one blob per sha256, in chunks).
//
//            insert_inbound (with the message)
//                       |
//                    pending --claim_media--> (leased) --retry_media--> pending
//                       |                         |
//                       |                         +--finish_media--> stored --purge_media--> purged
//                       |                         +--refuse_media--> over_cap | unfetchable |
//                       |                                            expired | mismatch
//   (any state) --dispatchctl erase--> erased
//
// A kept audio file may also wait for its transcript (migration 0038, media.transcription):
// finish_media with FetchedMedia::transcribe makes its transcript_state pending in the
// same transaction, so its message never looks ready before the transcript is asked for.
//
//   none --finish_media(transcribe)--> pending --claim_transcript--> (leased)
//      (leased) --retry_transcript--> pending
//      (leased) --finish_transcript--> done      (the text kept; audited)
//      (leased) --fail_transcript--> failed      (audited)
//
// A fetch writes its bytes through a BlobWriter (a staged blob naming its media row); a
// fetch that dies half-way leaves a staged blob, dropped when the file is claimed again, so
// a kill -9 loses nothing and keeps nothing twice. finish_media gives the staged blob its
// digest, or drops it for the blob that already has that digest. Every final state appends
// a `media` audit event for the message in the same transaction.
//
// Chunks are written and read one at a time: no file is ever whole in memory here. The
// caller says how its writes group into transactions (the daemon's fetcher commits a chunk
// at a time); finish_media, refuse_media and claim_media run in a transaction of their own
// (a savepoint inside one).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/states.h"

namespace dispatchd::store {

// The largest chunk a blob is written in.
inline constexpr std::size_t k_media_chunk_bytes = 256 * 1024;

struct MediaRow {
  std::int64_t id = 0;
  std::int64_t message_id = 0;
  int position = 0;     // among the message's files, from 0
  std::string channel;  // the message's
  MediaKind kind = MediaKind::document;
  std::string provider_ref;
  std::string declared_type;
  std::string declared_sha256;
  std::string filename;
  bool voice = false;
  MediaState state = MediaState::pending;
  std::string reason;                // why it is not stored ("" otherwise)
  int attempts = 0;                  // fetches begun
  std::optional<std::int64_t> size;  // stored: the bytes kept
  std::string sha256;                // stored: the blob's digest
  std::string sniffed_type;          // stored: what the first bytes show ("" when nothing matched)
  bool type_mismatch = false;        // stored: sniffed_type differs from declared_type
  std::string created_at;
  std::string fetched_at;  // "" until it reached a final state
  TranscriptState transcript_state = TranscriptState::none;
  std::string transcript;         // done: the text
  std::string transcript_reason;  // failed (or the last retry): why
  int transcript_attempts = 0;    // transcription requests begun
};

// The message of `row` must wait before the model reads it: its transcript is asked for
// and not yet made or given up on (transcript_state pending).
bool awaiting_transcript(const MediaRow& row);

// Writes the files of message `message_id` (store/inbox.h's MediaRef) as pending rows, in order. Called by
// insert_inbound in the message's transaction; a redelivered message writes nothing.
[[nodiscard]] Result<void> insert_media(Database& db, std::int64_t message_id, const std::vector<MediaRef>& files,
                                        Time now);

// Takes the oldest pending file that is due (next_attempt_at passed) and not leased (or
// whose lease expired), leases it to `worker` until now + lease, counts the attempt, and
// drops any blob an earlier fetch of it left half-written. nullopt when none is due.
[[nodiscard]] Result<std::optional<MediaRow>> claim_media(Database& db, const std::string& worker, Time now,
                                                          std::chrono::seconds lease);

// Ends every download lease `worker` holds: its files are claimed again at once (the
// half-written bytes dropped then); and its transcription leases. At start-up and
// shutdown, with the inbox's leases.
[[nodiscard]] Result<void> release_media_leases(Database& db, const std::string& worker);

// A fetch that failed but may work later: pending again, due at `next_attempt_at`, its
// lease released; reason kept for the trail.
[[nodiscard]] Result<void> retry_media(Database& db, std::int64_t media_id, Time next_attempt_at,
                                       const std::string& reason);

// A file that will not be kept: `state` is over_cap, unfetchable, expired or mismatch
// (anything else is refused, ErrorKind::internal). Drops its staged blob, audits.
[[nodiscard]] Result<void> refuse_media(Database& db, std::int64_t media_id, MediaState state,
                                        const std::string& reason, Time now);

// The bytes of one fetch, appended in order. begin() stages a blob for the file; append()
// writes one chunk (at most k_media_chunk_bytes); the writer keeps the running size.
class BlobWriter {
 public:
  [[nodiscard]] static Result<BlobWriter> begin(Database& db, std::int64_t media_id, Time now);
  [[nodiscard]] Result<void> append(std::string_view chunk);
  std::int64_t blob_id() const { return m_blob_id; }
  std::int64_t size() const { return m_size; }

 private:
  BlobWriter(Database& db, std::int64_t blob_id) : m_db(&db), m_blob_id(blob_id) {}
  Database* m_db;
  std::int64_t m_blob_id;
  std::int64_t m_seq = 0;
  std::int64_t m_size = 0;
};

// What the fetch learnt of the bytes it wrote.
struct FetchedMedia {
  std::string sha256;        // of the bytes written, lower-case hex
  std::string sniffed_type;  // "" when nothing matched
  bool type_mismatch = false;
  bool transcribe = false;  // an audio file to be transcribed: its transcript_state becomes pending
};

// The file is kept: its staged blob (written by `writer`) becomes the blob of that digest,
// or is dropped when one already has it. The row is stored with size and types; audits.
[[nodiscard]] Result<void> finish_media(Database& db, std::int64_t media_id, const BlobWriter& writer,
                                        const FetchedMedia& fetched, Time now);

// Takes the oldest stored file whose transcript is pending and due (transcript_next_at
// passed) and not leased (or whose lease expired), leases it to `worker` until now + lease
// and counts the attempt. nullopt when none is due.
[[nodiscard]] Result<std::optional<MediaRow>> claim_transcript(Database& db, const std::string& worker, Time now,
                                                               std::chrono::seconds lease);

// A transcription that failed but may work later: pending again, due at `next_attempt_at`,
// its lease released, `reason` kept.
[[nodiscard]] Result<void> retry_transcript(Database& db, std::int64_t media_id, Time next_attempt_at,
                                            const std::string& reason);

// The transcript is made: done with `text`; audits its length and sha256 (not the text).
// Refused when the transcript is not pending (erased meanwhile, or finished elsewhere).
[[nodiscard]] Result<void> finish_transcript(Database& db, std::int64_t media_id, const std::string& text, Time now);

// The transcript is given up on: failed with `reason`; audits.
[[nodiscard]] Result<void> fail_transcript(Database& db, std::int64_t media_id, const std::string& reason, Time now);

// One file; not_found when there is none.
[[nodiscard]] Result<MediaRow> find_media(Database& db, std::int64_t media_id);

// A message's files, in order.
[[nodiscard]] Result<std::vector<MediaRow>> list_media(Database& db, std::int64_t message_id);

// Hands a stored file's bytes to `chunk` in order, a chunk at a time; `chunk` returns false
// to stop. not_found when the file is not stored (its state says why).
[[nodiscard]] Result<void> read_media(Database& db, std::int64_t media_id,
                                      const std::function<bool(std::string_view chunk)>& chunk);

// The bytes the store keeps for media, every distinct file once: the total cap's measure.
[[nodiscard]] Result<std::int64_t> stored_media_bytes(Database& db);

// Removes the bytes of files stored before `before` (media.retention_days): their rows
// become purged, and a blob no row still uses is deleted. Returns the files purged.
[[nodiscard]] Result<std::int64_t> purge_media(Database& db, Time before, Time now);

// Deletes the blobs no media row uses any more (after an erase, which blanks the rows of
// its messages itself). Returns the blobs deleted.
[[nodiscard]] Result<std::int64_t> drop_unused_media_blobs(Database& db);

}  // namespace dispatchd::store
