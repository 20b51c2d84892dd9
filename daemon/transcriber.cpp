#include "daemon/transcriber.h"

#include <spdlog/spdlog.h>

#include <random>
#include <utility>

#include "store/media.h"

namespace dispatchd::daemon {
namespace {

using Status = TranscriptionStatus;

constexpr std::chrono::seconds k_transcript_lease_margin{60};

// A multipart boundary the file's bytes do not hold: "dispatchd-" and 32 random hex digits.
std::string boundary_for(const std::string& bytes) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  constexpr std::string_view k_hex = "0123456789abcdef";
  while (true) {
    std::string out = "dispatchd-";
    for (int i = 0; i < 32; ++i) out += k_hex[random() % 16];
    if (bytes.find(out) == std::string::npos) return out;
  }
}

}  // namespace

struct Transcriber::State : std::enable_shared_from_this<State> {
  TranscriberDeps deps;
  TranscriberSettings settings;
  TranscriptCounters counters;
  int running = 0;
  bool stopped = false;

  State(TranscriberDeps d, TranscriberSettings s) : deps(std::move(d)), settings(std::move(s)) {}

  void store_error(const store::Error& error, std::string_view what) {
    ++counters.store_errors;
    spdlog::warn("transcripts: {}: {}; the file is transcribed again later", what, error.message);
  }

  void start() {
    const auto lease = std::chrono::ceil<std::chrono::seconds>(settings.client.timeout) + k_transcript_lease_margin;
    while (!stopped && running < settings.parallel) {
      auto claimed = store::claim_transcript(deps.db, settings.worker, deps.now(), lease);
      if (!claimed) return store_error(claimed.error(), "cannot take a file to transcribe");
      if (!*claimed) return;
      begin(std::move(**claimed));
    }
  }

  void begin(store::MediaRow row) {
    if (row.size.value_or(0) > settings.max_bytes)
      return end(row, {Status::failed, {}, "larger than media.max_bytes.audio"});
    AudioUpload upload{row.id, row.sniffed_type.empty() ? row.declared_type : row.sniffed_type, {}};
    upload.bytes.reserve(static_cast<std::size_t>(row.size.value_or(0)));
    auto read = store::read_media(deps.db, row.id, [&](std::string_view chunk) {
      if (static_cast<std::int64_t>(upload.bytes.size() + chunk.size()) > settings.max_bytes) return false;
      upload.bytes.append(chunk);
      return true;
    });
    if (!read) {
      // Purged or erased since it was kept: nothing left to transcribe.
      if (read.error().kind == store::ErrorKind::not_found)
        return end(row, {Status::failed, {}, "its bytes are gone: " + read.error().message});
      return store_error(read.error(), "cannot read media " + std::to_string(row.id));
    }
    if (static_cast<std::int64_t>(upload.bytes.size()) != row.size.value_or(0))
      return end(row, {Status::failed, {}, "larger than media.max_bytes.audio"});
    auto request = transcription_request(settings.client, upload, boundary_for(upload.bytes));
    upload.bytes.clear();
    upload.bytes.shrink_to_fit();
    ++running;
    deps.transport.send(std::move(request), [weak = weak_from_this(), row = std::move(row)](net::HttpResult result) {
      auto self = weak.lock();
      if (!self || self->stopped) return;
      --self->running;
      const auto answer = read_transcription(result, std::chrono::system_clock::now());
      self->end(row, after_transcription(answer, row.transcript_attempts, self->settings.client.attempts), answer.text);
      self->start();
    });
  }

  void end(const store::MediaRow& row, const TranscriptionStep& step, const std::string& text = {}) {
    const store::Time now = deps.now();
    switch (step.status) {
      case Status::retry: {
        const auto at = now + std::chrono::ceil<std::chrono::seconds>(step.retry_in);
        if (auto done = store::retry_transcript(deps.db, row.id, at, step.why); !done)
          return store_error(done.error(), "cannot reschedule the transcript of media " + std::to_string(row.id));
        ++counters.retried;
        spdlog::info("transcripts: media {} of message {} transcribed again at {}: {}", row.id, row.message_id,
                     store::format_time(at), step.why);
        return;
      }
      case Status::done:
        if (auto done = store::finish_transcript(deps.db, row.id, text, now); !done)
          return store_error(done.error(), "cannot keep the transcript of media " + std::to_string(row.id));
        ++counters.done;
        spdlog::info("transcripts: media {} of message {} transcribed", row.id, row.message_id);
        break;
      case Status::failed:
        if (auto done = store::fail_transcript(deps.db, row.id, step.why, now); !done)
          return store_error(done.error(), "cannot record the transcript of media " + std::to_string(row.id));
        ++counters.failed;
        spdlog::warn("transcripts: media {} of message {} not transcribed: {}", row.id, row.message_id, step.why);
        break;
    }
    if (deps.transcribed) deps.transcribed(row.message_id);
  }
};

Transcriber::Transcriber(TranscriberDeps deps, TranscriberSettings settings)
    : m_state(std::make_shared<State>(std::move(deps), std::move(settings))) {}

Transcriber::~Transcriber() { m_state->stopped = true; }

void Transcriber::poke() { m_state->start(); }

void Transcriber::tick() {
  if (!m_state->stopped) m_state->start();
}

void Transcriber::stop() { m_state->stopped = true; }

const TranscriptCounters& Transcriber::counters() const { return m_state->counters; }

}  // namespace dispatchd::daemon
