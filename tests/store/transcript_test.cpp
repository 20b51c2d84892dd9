// Transcripts of kept audio files (migration 0038): a file kept for transcription waits
// (awaiting_transcript) from the very commit that keeps it; a transcription is leased,
// retried at its time, and ends done (the text kept, its digest audited) or failed; an
// erasure takes the text with the rest of the customer's data.

#include <catch2/catch.hpp>

#include <string>

#include "store/audit.h"
#include "store/inbox.h"
#include "store/media.h"
#include "store/migrations.h"
#include "store/tools/erase.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

using test::k_t0;

const std::string k_number = "15551234567";

// A voice note stored, done, and its file kept, with or without transcription; returns the
// file's id. REQUIRES: no other message is waiting to be taken.
std::int64_t kept_voice_note(store::Database& db, const std::string& id, bool transcribe) {
  store::InboundMessage m{"whatsapp", id, k_number, k_number, "[voice message]", "{}", "audio"};
  m.media.push_back({store::MediaKind::audio, "media." + id, "audio/ogg; codecs=opus", "", "", true});
  auto inserted = store::insert_inbound(db, m, k_t0);
  REQUIRE(inserted);
  // The message is done (an erasure waits for that); its file is what the tests follow.
  auto taken = store::take_next(db, "agent", k_t0, 24h);
  REQUIRE(taken);
  REQUIRE(*taken);
  REQUIRE((*taken)->id == inserted->id);
  REQUIRE(store::finish(db, inserted->id, store::Outcome::ignored, k_t0));
  auto file = store::claim_media(db, "fetcher", k_t0, 60s);
  REQUIRE(file);
  REQUIRE(*file);
  auto writer = store::BlobWriter::begin(db, (*file)->id, k_t0);
  REQUIRE(writer);
  REQUIRE(writer->append("OggS voice " + id));
  REQUIRE(store::finish_media(db, (*file)->id, *writer,
                              {store::sha256_hex("OggS voice " + id), "audio/ogg", false, transcribe}, k_t0));
  return (*file)->id;
}

store::MediaRow row(store::Database& db, std::int64_t id) {
  auto found = store::find_media(db, id);
  REQUIRE(found);
  return *found;
}

}  // namespace

TEST_CASE("transcripts: a file kept for transcription waits for it from the commit that keeps it", "[media]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const std::int64_t plain = kept_voice_note(db, "wamid.A", false);
  const std::int64_t voice = kept_voice_note(db, "wamid.B", true);
  CHECK(row(db, plain).transcript_state == store::TranscriptState::none);
  CHECK_FALSE(store::awaiting_transcript(row(db, plain)));
  const auto waiting = row(db, voice);
  CHECK(waiting.transcript_state == store::TranscriptState::pending);
  CHECK(store::awaiting_transcript(waiting));
  CHECK(waiting.transcript.empty());
  // Only the one to transcribe is claimed, leased, and counted.
  auto claimed = store::claim_transcript(db, "w1", k_t0, 90s);
  REQUIRE(claimed);
  REQUIRE(*claimed);
  CHECK((*claimed)->id == voice);
  CHECK((*claimed)->transcript_attempts == 1);
  auto leased = store::claim_transcript(db, "w2", k_t0 + 30s, 90s);
  REQUIRE(leased);
  CHECK_FALSE(*leased);
  // Retried: due at its time, not before.
  REQUIRE(store::retry_transcript(db, voice, k_t0 + 120s, "HTTP 503: busy"));
  CHECK(row(db, voice).transcript_reason == "HTTP 503: busy");
  auto early = store::claim_transcript(db, "w2", k_t0 + 60s, 90s);
  REQUIRE(early);
  CHECK_FALSE(*early);
  auto due = store::claim_transcript(db, "w2", k_t0 + 120s, 90s);
  REQUIRE(due);
  REQUIRE(*due);
  CHECK((*due)->transcript_attempts == 2);
  REQUIRE(store::finish_transcript(db, voice, "Hola, ¿dónde está mi pedido?", k_t0 + 121s));
  const auto done = row(db, voice);
  CHECK(done.transcript_state == store::TranscriptState::done);
  CHECK(done.transcript == "Hola, ¿dónde está mi pedido?");
  CHECK(done.transcript_reason.empty());
  CHECK_FALSE(store::awaiting_transcript(done));
  // Once: a second ending is refused.
  CHECK_FALSE(store::finish_transcript(db, voice, "again", k_t0 + 122s));
  CHECK_FALSE(store::fail_transcript(db, voice, "again", k_t0 + 122s));
  CHECK_FALSE(store::fail_transcript(db, plain, "never asked", k_t0 + 122s));
  // The audit trail has its digest and length, never the words.
  CHECK(test::query_int(db, "SELECT count(*) FROM v_audit WHERE event = 'transcript'").value() == 1);
  CHECK(test::query_int(db, "SELECT count(*) FROM audit WHERE detail LIKE '%pedido%'").value() == 0);
  CHECK(test::query_int(db, "SELECT count(*) FROM audit WHERE detail LIKE '%\"chars\":28%' AND detail LIKE '%" +
                                store::sha256_hex("Hola, ¿dónde está mi pedido?") + "%'")
            .value() == 1);
}

TEST_CASE("transcripts: a failed transcript keeps why, a worker's leases end when it hands them back", "[media]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const std::int64_t voice = kept_voice_note(db, "wamid.A", true);
  auto claimed = store::claim_transcript(db, "w1", k_t0, 600s);
  REQUIRE(claimed);
  REQUIRE(*claimed);
  REQUIRE(store::release_media_leases(db, "w1"));
  auto again = store::claim_transcript(db, "w2", k_t0 + 1s, 600s);
  REQUIRE(again);
  REQUIRE(*again);
  CHECK((*again)->id == voice);
  REQUIRE(store::fail_transcript(db, voice, "HTTP 400: \"Invalid file format.\"", k_t0 + 2s));
  const auto failed = row(db, voice);
  CHECK(failed.transcript_state == store::TranscriptState::failed);
  CHECK(failed.transcript_reason == "HTTP 400: \"Invalid file format.\"");
  CHECK_FALSE(store::awaiting_transcript(failed));
  CHECK(test::query_int(db,
                        "SELECT count(*) FROM audit WHERE detail LIKE '%\"state\":\"failed\"%'"
                        " AND detail LIKE '%\"attempts\":2%'")
            .value() == 1);
}

TEST_CASE("transcripts: an erasure takes the transcript, and ends one still waiting", "[media]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const std::int64_t done = kept_voice_note(db, "wamid.A", true);
  auto claimed = store::claim_transcript(db, "w1", k_t0, 60s);
  REQUIRE(claimed);
  REQUIRE(*claimed);
  REQUIRE(store::finish_transcript(db, done, "mi dirección es calle falsa 123", k_t0));
  const std::int64_t waiting = kept_voice_note(db, "wamid.B", true);
  auto erased = store::erase_counterpart(db, {k_number, "dpo", false, {"whatsapp"}}, k_t0 + 1h);
  REQUIRE(erased);
  CHECK(test::query_int(db, "SELECT count(*) FROM media WHERE transcript IS NOT NULL OR transcript_reason IS NOT NULL")
            .value() == 0);
  CHECK(row(db, waiting).transcript_state == store::TranscriptState::failed);
  CHECK_FALSE(store::awaiting_transcript(row(db, waiting)));
  CHECK(row(db, done).transcript.empty());
  auto none = store::claim_transcript(db, "w1", k_t0 + 2h, 60s);
  REQUIRE(none);
  CHECK_FALSE(*none);
}
