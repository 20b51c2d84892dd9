#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "store/audit.h"
#include "store/inbox.h"
#include "store/media.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

using test::k_t0;

store::MediaRef photo(const std::string& ref) {
  store::MediaRef m;
  m.kind = store::MediaKind::image;
  m.provider_ref = ref;
  m.declared_type = "image/jpeg";
  m.declared_sha256 = std::string(64, 'a');
  return m;
}

store::InboundMessage with_media(const std::string& id, std::vector<store::MediaRef> media) {
  store::InboundMessage m;
  m.channel = "whatsapp";
  m.provider_message_id = id;
  m.conversation_id = "15551234567";
  m.sender = "15551234567";
  m.text = "[image]";
  m.raw_payload = "{}";
  m.type = "image";
  m.media = std::move(media);
  return m;
}

std::int64_t insert(store::Database& db, const store::InboundMessage& m) {
  auto stored = store::insert_inbound(db, m, k_t0);
  REQUIRE(stored);
  return stored->id;
}

// Every byte value, NULs included, over more than one chunk.
std::string binary(std::size_t size, unsigned seed) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>((i * 131 + seed) % 256);
  return out;
}

std::int64_t claim(store::Database& db, store::Time now) {
  auto claimed = store::claim_media(db, "worker", now, 60s);
  REQUIRE(claimed);
  REQUIRE(claimed->has_value());
  return (*claimed)->id;
}

// Writes `bytes` for the claimed file in chunks and finishes it with `digest`.
void store_bytes(store::Database& db, std::int64_t media_id, const std::string& bytes, const std::string& digest) {
  auto writer = store::BlobWriter::begin(db, media_id, k_t0);
  REQUIRE(writer);
  for (std::size_t at = 0; at < bytes.size(); at += store::k_media_chunk_bytes)
    REQUIRE(writer->append(std::string_view(bytes).substr(at, store::k_media_chunk_bytes)));
  REQUIRE(store::finish_media(db, media_id, *writer, {digest, "image/jpeg", false}, k_t0 + 1s));
}

std::string read_all(store::Database& db, std::int64_t media_id) {
  std::string out;
  int chunks = 0;
  auto read = store::read_media(db, media_id, [&](std::string_view chunk) {
    out += chunk;
    ++chunks;
    return true;
  });
  REQUIRE(read);
  CHECK(chunks == static_cast<int>((out.size() + store::k_media_chunk_bytes - 1) / store::k_media_chunk_bytes));
  return out;
}

}  // namespace

TEST_CASE("media: a message's files are stored pending with it, in order, and once", "[media]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  auto doc = photo("m2");
  doc.kind = store::MediaKind::document;
  doc.declared_type = "application/pdf";
  doc.declared_sha256.clear();
  doc.filename = "invoice.pdf";
  const auto message = with_media("wamid.A", {photo("m1"), doc});
  const std::int64_t id = insert(db, message);
  REQUIRE(store::insert_inbound(db, message, k_t0 + 5s));  // redelivered
  auto files = store::list_media(db, id);
  REQUIRE(files);
  REQUIRE(files->size() == 2);
  CHECK((*files)[0].provider_ref == "m1");
  CHECK((*files)[0].position == 0);
  CHECK((*files)[0].channel == "whatsapp");
  CHECK((*files)[0].state == store::MediaState::pending);
  CHECK((*files)[0].declared_sha256 == std::string(64, 'a'));
  CHECK((*files)[1].kind == store::MediaKind::document);
  CHECK((*files)[1].filename == "invoice.pdf");
  CHECK((*files)[1].declared_sha256.empty());
  CHECK_FALSE((*files)[1].size);
  CHECK(test::query_int(db, "SELECT count(*) FROM media").value() == 2);
}

TEST_CASE("media: bytes of every value go in chunks and come back the same, counted once", "[media]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const std::int64_t message = insert(db, with_media("wamid.A", {photo("m1")}));
  const std::int64_t id = claim(db, k_t0);
  const std::string bytes = binary(2 * store::k_media_chunk_bytes + 1000, 7);
  store_bytes(db, id, bytes, std::string(64, 'b'));
  auto row = store::find_media(db, id);
  REQUIRE(row);
  CHECK(row->state == store::MediaState::stored);
  CHECK(row->message_id == message);
  CHECK(row->size == static_cast<std::int64_t>(bytes.size()));
  CHECK(row->sha256 == std::string(64, 'b'));
  CHECK(row->sniffed_type == "image/jpeg");
  CHECK(read_all(db, id) == bytes);
  CHECK(store::stored_media_bytes(db).value() == static_cast<std::int64_t>(bytes.size()));
  CHECK(test::query_int(db, "SELECT count(*) FROM v_audit WHERE event = 'media'").value() == 1);
  auto verified = store::verify_audit(db);
  REQUIRE(verified);
  CHECK_FALSE(verified->first_broken);
}

TEST_CASE("media: the same file sent twice is kept once", "[media]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  insert(db, with_media("wamid.A", {photo("m1")}));
  insert(db, with_media("wamid.B", {photo("m2")}));
  const std::string bytes = binary(1000, 3);
  const std::int64_t first = claim(db, k_t0);
  store_bytes(db, first, bytes, std::string(64, 'c'));
  const std::int64_t second = claim(db, k_t0);
  CHECK(second != first);
  store_bytes(db, second, bytes, std::string(64, 'c'));
  CHECK(test::query_int(db, "SELECT count(*) FROM media_blobs").value() == 1);
  CHECK(store::stored_media_bytes(db).value() == 1000);
  CHECK(read_all(db, second) == bytes);
  CHECK(store::find_media(db, second)->sha256 == std::string(64, 'c'));
}

TEST_CASE("media: a claimed file is leased, and a dead fetch's bytes are dropped when it is claimed again", "[media]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  insert(db, with_media("wamid.A", {photo("m1")}));
  const std::int64_t id = claim(db, k_t0);
  auto none = store::claim_media(db, "other", k_t0 + 30s, 60s);
  REQUIRE(none);
  CHECK_FALSE(none->has_value());
  // The fetch dies half-way: a staged blob with a chunk, never finished.
  {
    auto writer = store::BlobWriter::begin(db, id, k_t0);
    REQUIRE(writer);
    REQUIRE(writer->append("half"));
  }
  CHECK(test::query_int(db, "SELECT count(*) FROM media_chunks").value() == 1);
  auto again = store::claim_media(db, "other", k_t0 + 61s, 60s);
  REQUIRE(again);
  REQUIRE(again->has_value());
  CHECK((*again)->id == id);
  CHECK((*again)->attempts == 2);
  CHECK(test::query_int(db, "SELECT count(*) FROM media_blobs").value() == 0);
  CHECK(test::query_int(db, "SELECT count(*) FROM media_chunks").value() == 0);
  store_bytes(db, id, "whole", std::string(64, 'd'));
  CHECK(read_all(db, id) == "whole");
}

TEST_CASE("media: a retried file waits for its time, a refused one keeps its reason and no bytes", "[media]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  insert(db, with_media("wamid.A", {photo("m1"), photo("m2")}));
  const std::int64_t first = claim(db, k_t0);
  REQUIRE(store::retry_media(db, first, k_t0 + 120s, "Graph answered 503"));
  const std::int64_t second = claim(db, k_t0 + 1s);
  CHECK(second != first);
  {
    auto writer = store::BlobWriter::begin(db, second, k_t0);
    REQUIRE(writer);
    REQUIRE(writer->append("too much"));
  }
  REQUIRE(store::refuse_media(db, second, store::MediaState::over_cap, "larger than media.max_bytes.image", k_t0));
  CHECK(test::query_int(db, "SELECT count(*) FROM media_blobs").value() == 0);
  auto waiting = store::claim_media(db, "worker", k_t0 + 60s, 60s);
  REQUIRE(waiting);
  CHECK_FALSE(waiting->has_value());
  CHECK(claim(db, k_t0 + 120s) == first);
  REQUIRE(store::refuse_media(db, first, store::MediaState::expired, "Graph: media id not found", k_t0 + 121s));

  auto refused = store::find_media(db, second);
  REQUIRE(refused);
  CHECK(refused->state == store::MediaState::over_cap);
  CHECK(refused->reason == "larger than media.max_bytes.image");
  CHECK_FALSE(refused->size);
  auto read = store::read_media(db, second, [](std::string_view) { return true; });
  REQUIRE_FALSE(read);
  CHECK(read.error().kind == store::ErrorKind::not_found);
  CHECK(read.error().message.find("over_cap") != std::string::npos);
  // Only a pending file is refused, and only as a refusal.
  CHECK_FALSE(store::refuse_media(db, second, store::MediaState::unfetchable, "again", k_t0));
  CHECK_FALSE(store::refuse_media(db, first, store::MediaState::stored, "no", k_t0));
  CHECK(test::query_int(db, "SELECT count(*) FROM v_audit WHERE event = 'media'").value() == 2);
}

TEST_CASE("media: retention purges old files, keeping a blob a newer file still uses", "[media]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  insert(db, with_media("wamid.A", {photo("m1"), photo("m2")}));
  const std::int64_t old_file = claim(db, k_t0);
  store_bytes(db, old_file, "shared", std::string(64, 'e'));
  const std::int64_t other = claim(db, k_t0);
  store_bytes(db, other, "alone", std::string(64, 'f'));
  // A newer message with the first file's bytes, stored ten days later.
  test::exec(db, "UPDATE media SET fetched_at = '2026-11-01T00:00:00Z'").value();
  insert(db, with_media("wamid.B", {photo("m3")}));
  const std::int64_t newer = claim(db, k_t0);
  store_bytes(db, newer, "shared", std::string(64, 'e'));

  auto purged = store::purge_media(db, k_t0 - std::chrono::days(7), k_t0);
  REQUIRE(purged);
  CHECK(*purged == 2);
  CHECK(store::find_media(db, old_file)->state == store::MediaState::purged);
  CHECK(store::find_media(db, newer)->state == store::MediaState::stored);
  CHECK(read_all(db, newer) == "shared");
  CHECK(test::query_int(db, "SELECT count(*) FROM media_blobs").value() == 1);
  CHECK(store::stored_media_bytes(db).value() == 6);
}

TEST_CASE("media: a blob binds and reads back every byte value on the engine", "[media]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  insert(db, with_media("wamid.A", {photo("m1")}));
  const std::int64_t id = claim(db, k_t0);
  std::string all(256, '\0');
  for (int i = 0; i < 256; ++i) all[static_cast<std::size_t>(i)] = static_cast<char>(i);
  store_bytes(db, id, all + all, std::string(64, '0'));
  CHECK(read_all(db, id) == all + all);
  auto empty_file = store::list_media(db, 999);
  REQUIRE(empty_file);
  CHECK(empty_file->empty());
}

TEST_CASE("media: a worker's download leases end when it hands its leases back, another's stay", "[media]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  insert(db, with_media("wamid.A", {photo("m1"), photo("m2")}));
  auto mine = store::claim_media(db, "me", k_t0, 600s);
  auto theirs = store::claim_media(db, "them", k_t0, 600s);
  REQUIRE(mine);
  REQUIRE(theirs);
  REQUIRE(store::release_leases(db, "me"));
  auto again = store::claim_media(db, "me", k_t0 + 1s, 600s);
  REQUIRE(again);
  REQUIRE(again->has_value());
  CHECK((*again)->id == (**mine).id);
  auto none = store::claim_media(db, "me", k_t0 + 2s, 600s);
  REQUIRE(none);
  CHECK_FALSE(none->has_value());
}
