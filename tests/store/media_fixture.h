#pragma once
// A finished message with one kept file, written through the store as the daemon writes it
// (the message stored with its file, taken and finished, the file fetched and kept), for the
// store tests of what happens to files afterwards (archive, erase, moves).

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "store/inbox.h"
#include "store/media.h"

namespace dispatchd::test {

struct PhotoMessage {
  std::string provider_message_id;
  std::string sender;
  std::string bytes;
  std::string sha256;
  std::string filename;  // "" for none
};

// Stores `p` as an image message, ignored by the agent, its file kept; returns the file's id.
// REQUIRES: no other message or file of the database is waiting to be taken.
inline std::int64_t stored_photo_message(store::Database& db, const PhotoMessage& p, store::Time at) {
  store::InboundMessage m{"whatsapp", p.provider_message_id, p.sender, p.sender, "[image]", "{}", "image"};
  m.media.push_back({store::MediaKind::image, "media." + p.provider_message_id, "image/jpeg", "", p.filename, false});
  auto inserted = store::insert_inbound(db, m, at);
  REQUIRE(inserted);
  auto taken = store::take_next(db, "w", at, std::chrono::hours(24 * 365));
  REQUIRE(taken);
  REQUIRE(*taken);
  REQUIRE((*taken)->id == inserted->id);
  REQUIRE(store::finish(db, inserted->id, store::Outcome::ignored, at));
  auto file = store::claim_media(db, "fetcher", at, std::chrono::seconds(60));
  REQUIRE(file);
  REQUIRE(*file);
  auto writer = store::BlobWriter::begin(db, (*file)->id, at);
  REQUIRE(writer);
  REQUIRE(writer->append(p.bytes));
  REQUIRE(store::finish_media(db, (*file)->id, *writer, {p.sha256, "image/jpeg", false}, at));
  return (*file)->id;
}

// A kept file's bytes, read back a chunk at a time.
inline std::string media_bytes(store::Database& db, std::int64_t media_id) {
  std::string out;
  REQUIRE(store::read_media(db, media_id, [&](std::string_view chunk) {
    out += chunk;
    return true;
  }));
  return out;
}

}  // namespace dispatchd::test
