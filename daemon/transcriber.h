#pragma once
// The transcriber (media.transcription; docs/media.md, "Voice notes transcribed"): turns the
// kept audio files waiting for a transcript (store/media.h, transcript_state pending) into
// text, through the OpenAI-compatible endpoint of daemon/transcription.h.
//
// One transcription: store::claim_transcript (leased to this instance for the request's
// timeout and a minute), the file's bytes read from the store (store::read_media; never more
// than its kind's cap, media.max_bytes.audio, so at most that much in memory), one POST, and
// what after_transcription() decides written: finish_transcript (done), retry_transcript
// (pending again at its time) or fail_transcript (failed). Each ending pokes `transcribed`
// (the agent: the file's message may be ready now).
//
// A store error ends the transcription where it is: the row stays pending, its lease runs
// out and a transcription (this instance's or another's) starts it again; a kill -9
// mid-request loses nothing (the transcript is asked for again).
//
// Transcriptions run `parallel` at a time; poke() (a file was kept) and tick() (once a
// second: retries come due) start them.
//
// Threading: the loop's thread only; the transport must outlive its requests (stop() first:
// an answer that comes after stop() writes nothing).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "daemon/transcription.h"
#include "net/http.h"
#include "store/database.h"
#include "store/inbox.h"

namespace dispatchd::daemon {

struct TranscriberSettings {
  TranscriptionSettings client;
  std::int64_t max_bytes = 16 << 20;  // media.max_bytes.audio: a larger file is failed unsent
  std::string worker = "dispatchd";   // the lease's owner: this instance
  int parallel = 2;
};

struct TranscriberDeps {
  store::Database& db;
  net::Transport& transport;
  std::function<store::Time()> now;
  // A transcript of the message ended (done or failed): its turn may be asked now
  // (agent::Agent::media_settled); may be empty.
  std::function<void(std::int64_t message_id)> transcribed;
};

struct TranscriptCounters {
  std::int64_t done = 0;
  std::int64_t failed = 0;
  std::int64_t retried = 0;
  std::int64_t store_errors = 0;  // transcriptions ended by a store error (started again later)
};

class Transcriber {
 public:
  Transcriber(TranscriberDeps deps, TranscriberSettings settings);
  ~Transcriber();
  Transcriber(const Transcriber&) = delete;
  Transcriber& operator=(const Transcriber&) = delete;

  void poke();
  void tick();
  void stop();
  const TranscriptCounters& counters() const;

  struct State;

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::daemon
