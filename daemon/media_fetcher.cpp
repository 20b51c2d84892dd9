#include "daemon/media_fetcher.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "common/backoff.h"
#include "media/digest.h"
#include "media/policy.h"
#include "media/sniff.h"

namespace dispatchd::daemon {
namespace {

using connectors::MediaFetchStatus;
using Kind = FetchDecision::Kind;

constexpr Backoff k_retry_backoff{std::chrono::seconds(2), std::chrono::minutes(10)};
constexpr std::chrono::seconds k_lease_margin{60};
constexpr std::chrono::hours k_purge_every{1};

FetchDecision refuse(store::MediaState state, std::string reason) {
  return FetchDecision{Kind::refuse, state, {}, std::move(reason)};
}

std::int64_t cap_of(const MediaFetcherSettings& s, store::MediaKind kind) {
  return s.max_bytes[static_cast<int>(kind)];
}

}  // namespace

FetchDecision after_fetch(const FetchFacts& f) {
  const auto retry = [&](std::string why) {
    if (f.attempts >= f.max_attempts)
      return refuse(store::MediaState::unfetchable,
                    std::move(why) + " (after " + std::to_string(f.attempts) + " attempts)");
    const auto wait = std::max(exponential_backoff(k_retry_backoff, f.attempts), f.result.retry_after);
    return FetchDecision{Kind::retry, store::MediaState::pending, wait, std::move(why)};
  };
  const std::string over = "larger than its cap of " + std::to_string(f.cap) + " bytes";
  switch (f.result.status) {
    case MediaFetchStatus::complete:
      if (!f.declared_sha256.empty() && f.declared_sha256 != f.sha256)
        return refuse(store::MediaState::mismatch, "sha256 " + f.sha256 + " is not the declared " + f.declared_sha256);
      return FetchDecision{Kind::store, store::MediaState::stored, {}, {}};
    case MediaFetchStatus::stopped:
      if (f.over_cap) return refuse(store::MediaState::over_cap, over);
      return retry(f.write_failed ? "the store refused a chunk" : "stopped");
    case MediaFetchStatus::too_large: return refuse(store::MediaState::over_cap, over + ": " + f.result.why);
    case MediaFetchStatus::expired: return refuse(store::MediaState::expired, f.result.why);
    case MediaFetchStatus::refused: return refuse(store::MediaState::unfetchable, f.result.why);
    case MediaFetchStatus::retry: return retry(f.result.why);
  }
  return retry("unknown outcome");
}

struct MediaFetcher::State : std::enable_shared_from_this<State> {
  MediaFetcherDeps deps;
  MediaFetcherSettings settings;
  MediaCounters counters;
  int running = 0;
  bool stopped = false;
  std::optional<store::Time> last_purge;

  State(MediaFetcherDeps d, MediaFetcherSettings s) : deps(std::move(d)), settings(std::move(s)) {}

  // One download's receiver and bookkeeping.
  struct Download {
    store::MediaRow row;
    std::optional<store::BlobWriter> writer;
    media::Sha256 digest;
    std::string pending;  // bytes not yet written: less than a chunk
    std::string head;     // the first bytes, for sniffing
    std::int64_t received = 0;
    std::int64_t cap = 0;
    bool over_cap = false;
    bool write_failed = false;
  };

  void store_error(const store::Error& error, std::string_view what) {
    ++counters.store_errors;
    spdlog::warn("media: {}: {}; the file is fetched again later", what, error.message);
  }

  void start() {
    while (!stopped && running < settings.parallel) {
      const store::Time now = deps.now();
      auto claimed =
          store::claim_media(deps.db, settings.worker, now,
                             std::chrono::duration_cast<std::chrono::seconds>(settings.fetch_timeout) + k_lease_margin);
      if (!claimed) return store_error(claimed.error(), "cannot take a file to fetch");
      if (!*claimed) return;
      begin(std::move(**claimed), now);
    }
  }

  void begin(store::MediaRow row, store::Time now) {
    const std::int64_t cap = cap_of(settings, row.kind);
    auto total = store::stored_media_bytes(deps.db);
    if (!total) return store_error(total.error(), "cannot read the media total");
    if (*total >= settings.max_total_bytes) {
      return write(row, refuse(store::MediaState::over_cap, "the media store is at media.max_total_mib"));
    }
    connectors::Channel* channel = deps.channel(row.channel);
    auto download = std::make_shared<Download>();
    download->row = std::move(row);
    download->cap = cap;
    auto writer = store::BlobWriter::begin(deps.db, download->row.id, now);
    if (!writer) return store_error(writer.error(), "cannot stage a file");
    download->writer = std::move(*writer);
    connectors::MediaChunk chunk = [weak = weak_from_this(), download](std::string_view bytes) {
      auto self = weak.lock();
      return self && !self->stopped && self->receive(*download, bytes);
    };
    connectors::MediaFetchDone done = [weak = weak_from_this(), download](connectors::MediaFetchResult result) {
      if (auto self = weak.lock(); self && !self->stopped) self->ended(*download, std::move(result));
    };
    const connectors::MediaFetch fetch{download->row.provider_ref, cap, settings.fetch_timeout};
    if (channel == nullptr || !channel->fetch_media(fetch, chunk, done)) {
      return write(download->row,
                   refuse(store::MediaState::unfetchable, "channel " + download->row.channel + " keeps no files"));
    }
    ++running;
  }

  bool receive(Download& d, std::string_view bytes) {
    if (d.received + static_cast<std::int64_t>(bytes.size()) > d.cap) {
      d.over_cap = true;
      return false;
    }
    d.received += static_cast<std::int64_t>(bytes.size());
    d.digest.update(bytes);
    if (d.head.size() < media::k_sniff_bytes) d.head.append(bytes.substr(0, media::k_sniff_bytes - d.head.size()));
    d.pending.append(bytes);
    while (d.pending.size() >= store::k_media_chunk_bytes) {
      if (!flush(d, store::k_media_chunk_bytes)) return false;
    }
    return true;
  }

  bool flush(Download& d, std::size_t n) {
    if (auto written = d.writer->append(std::string_view(d.pending).substr(0, n)); !written) {
      store_error(written.error(), "cannot write a chunk of media " + std::to_string(d.row.id));
      d.write_failed = true;
      return false;
    }
    counters.bytes += static_cast<std::int64_t>(n);
    d.pending.erase(0, n);
    return true;
  }

  void ended(Download& d, connectors::MediaFetchResult result) {
    --running;
    if (result.status == MediaFetchStatus::complete && !d.pending.empty() && !flush(d, d.pending.size()))
      result.status = MediaFetchStatus::stopped;
    FetchFacts facts{std::move(result),     d.over_cap,     d.write_failed, d.row.attempts, settings.fetch_attempts,
                     d.row.declared_sha256, d.digest.hex(), d.cap};
    // A channel may declare the digest only when asked (WhatsApp's lookup): it counts too.
    if (facts.declared_sha256.empty()) facts.declared_sha256 = facts.result.sha256;
    const FetchDecision decision = after_fetch(facts);
    if (decision.kind == Kind::store) {
      const std::string sniffed(media::sniff(d.head));
      const std::string& declared = facts.result.content_type.empty() ? d.row.declared_type : facts.result.content_type;
      const store::FetchedMedia fetched{facts.sha256, sniffed,
                                        media::compare(declared, sniffed) == media::TypeMatch::differs,
                                        settings.transcribe_audio && d.row.kind == store::MediaKind::audio};
      if (auto done = store::finish_media(deps.db, d.row.id, *d.writer, fetched, deps.now()); !done) {
        store_error(done.error(), "cannot keep media " + std::to_string(d.row.id));
      } else {
        ++counters.stored;
        if (deps.settled) deps.settled(d.row.message_id);
        if (deps.kept) deps.kept();
      }
    } else {
      write(d.row, decision);
    }
    start();
  }

  void write(const store::MediaRow& row, const FetchDecision& decision) {
    const store::Time now = deps.now();
    if (decision.kind == Kind::retry) {
      const auto at = now + std::chrono::ceil<std::chrono::seconds>(decision.retry_in);
      if (auto done = store::retry_media(deps.db, row.id, at, decision.reason); !done)
        return store_error(done.error(), "cannot reschedule media " + std::to_string(row.id));
      ++counters.retried;
      spdlog::info("media: {} of message {} fetched again at {}: {}", row.id, row.message_id, store::format_time(at),
                   decision.reason);
      return;
    }
    if (auto done = store::refuse_media(deps.db, row.id, decision.refused_as, decision.reason, now); !done)
      return store_error(done.error(), "cannot record media " + std::to_string(row.id));
    ++counters.refused;
    if (deps.settled) deps.settled(row.message_id);
    spdlog::info("media: {} of message {} not kept ({}): {}", row.id, row.message_id,
                 store::to_sql(decision.refused_as), decision.reason);
  }

  void purge() {
    const store::Time now = deps.now();
    if (last_purge && now - *last_purge < k_purge_every) return;
    last_purge = now;
    auto purged = store::purge_media(deps.db, now - std::chrono::days(settings.retention_days), now);
    if (!purged) return store_error(purged.error(), "cannot purge old media");
    counters.purged += *purged;
    if (*purged > 0) spdlog::info("media: {} files past media.retention_days purged", *purged);
  }
};

MediaFetcher::MediaFetcher(MediaFetcherDeps deps, MediaFetcherSettings settings)
    : m_state(std::make_shared<State>(std::move(deps), std::move(settings))) {}

MediaFetcher::~MediaFetcher() { m_state->stopped = true; }

void MediaFetcher::poke() { m_state->start(); }

void MediaFetcher::tick() {
  if (m_state->stopped) return;
  m_state->purge();
  m_state->start();
}

void MediaFetcher::stop() { m_state->stopped = true; }

const MediaCounters& MediaFetcher::counters() const { return m_state->counters; }

}  // namespace dispatchd::daemon
