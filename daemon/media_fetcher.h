#pragma once
// The media fetcher: downloads the customers' files the channels recorded with their
// messages (store/media.h) and keeps them, the same way for every channel.
//
// A fetch: store::claim_media (leased to this instance for the download's timeout and a
// minute), the total cap checked (store::stored_media_bytes), then the file's channel's
// Channel::fetch_media. Its bytes are hashed (sha256), sniffed (media/sniff.h) and written a
// chunk at a time (store::BlobWriter): never more than one chunk in memory, and the download
// stops at the kind's cap. Then what after_fetch() decides (a pure table) is written:
//   stored          finish_media: content-addressed, the sniffed type recorded (a mismatch
//                   with the declared type flagged); an audio file waits for its transcript
//                   when transcribe_audio is set
//   retry           retry_media after a backoff (2 s doubling, at most 10 min, at least
//                   the provider's Retry-After); past media.fetch_attempts: unfetchable
//   refused         refuse_media: over_cap, expired, unfetchable, or mismatch (the bytes'
//                   sha256 is not the one the channel declared)
// A store error ends the fetch where it is: the row stays pending, its lease runs out and
// another fetch (this instance's or another's) starts it again, dropping the half-written
// bytes; so a kill -9 mid-download loses nothing and keeps nothing twice.
//
// Fetches run two at a time; poke() (a channel stored messages) and tick() (once a
// second: retries come due, and once an hour the retention purge) start them.
//
// Threading: the loop's thread only; channels must outlive the fetcher's downloads (stop it
// first: a download that ends after stop() writes nothing).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "connectors/channel.h"
#include "store/database.h"
#include "store/inbox.h"
#include "store/media.h"

namespace dispatchd::daemon {

struct MediaFetcherSettings {
  // media.max_bytes.<kind>, by store::MediaKind's order (image, audio, video, document, sticker).
  std::int64_t max_bytes[5] = {5 << 20, 16 << 20, 16 << 20, 25 << 20, 512 << 10};
  std::int64_t max_total_bytes = std::int64_t{10} << 30;
  int fetch_attempts = 5;
  std::chrono::milliseconds fetch_timeout{120'000};
  int retention_days = 90;
  std::string worker = "dispatchd";  // the lease's owner: this instance
  int parallel = 2;
  // media.transcription is set: a kept audio file waits for its transcript (daemon/transcriber.h).
  bool transcribe_audio = false;
};

struct MediaFetcherDeps {
  store::Database& db;
  std::function<store::Time()> now;
  // The channel that recorded a file, by its name; null when none is running by that name.
  std::function<connectors::Channel*(std::string_view name)> channel;
  // A file of the message reached its final state (stored or refused): its turn, waiting
  // for it, may be asked now (agent::Agent::media_settled). May be empty.
  std::function<void(std::int64_t message_id)> settled = {};
  std::function<void()> kept = {};  // a file was kept (the transcriber's poke); may be empty
};

struct MediaCounters {
  std::int64_t stored = 0;
  std::int64_t refused = 0;  // over_cap, expired, unfetchable, mismatch
  std::int64_t retried = 0;
  std::int64_t store_errors = 0;  // fetches ended by a store error (started again later)
  std::int64_t bytes = 0;         // written to the store
  std::int64_t purged = 0;
};

// What one fetch's outcome leads to (the table in after_fetch's comment).
struct FetchDecision {
  enum class Kind { store, retry, refuse } kind = Kind::store;
  store::MediaState refused_as = store::MediaState::unfetchable;  // refuse
  std::chrono::milliseconds retry_in{0};                          // retry
  std::string reason;
};

// What the fetcher knows when a download ends.
struct FetchFacts {
  connectors::MediaFetchResult result;
  bool over_cap = false;      // the receiver stopped it at the kind's cap
  bool write_failed = false;  // the receiver stopped it: a chunk could not be written
  int attempts = 1;           // fetches begun, this one included
  int max_attempts = 5;
  std::string declared_sha256;  // the channel's, "" when it declared none
  std::string sha256;           // of the bytes received
  std::int64_t cap = 0;
};

// complete + sha256 as declared (or none declared) -> store; complete + another sha256 ->
// refuse mismatch; too_large or over_cap -> refuse over_cap; expired -> refuse expired;
// refused -> refuse unfetchable; retry, or write_failed -> retry after 2 s doubling per
// attempt (at most 10 min, at least Retry-After), or refuse unfetchable once attempts reach
// max_attempts.
FetchDecision after_fetch(const FetchFacts& facts);

class MediaFetcher {
 public:
  MediaFetcher(MediaFetcherDeps deps, MediaFetcherSettings settings);
  ~MediaFetcher();
  MediaFetcher(const MediaFetcher&) = delete;
  MediaFetcher& operator=(const MediaFetcher&) = delete;

  void poke();
  void tick();
  void stop();
  const MediaCounters& counters() const;

  struct State;

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::daemon
