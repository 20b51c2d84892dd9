// The media fetcher against a scripted channel on a real store: each download's outcome
// becomes its row's state (after_fetch's table), bytes are kept content-addressed, caps hold,
// and a fetch cut off half-way is taken again without keeping anything twice.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "daemon/media_fetcher.h"
#include "store/audit.h"
#include "store/media.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using connectors::MediaFetchStatus;

namespace {

// sha256("hello world")
const std::string k_hello = "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9";

// A channel whose downloads the test answers: bytes handed over in pieces, then an outcome.
class MediaChannel final : public connectors::Channel {
 public:
  explicit MediaChannel(boost::asio::io_context& io) : m_io(io) {}
  std::string_view name() const override { return "whatsapp"; }
  void send(const store::OutboxItem&, connectors::SendDone) override {}
  bool resolve_unknown(const store::OutboxItem&, connectors::SendDone&) override { return false; }
  connectors::Health health() const override { return {}; }
  connectors::WebhookEndpoint* webhook() override { return nullptr; }
  void stop() override {}
  bool fetch_media(const connectors::MediaFetch& fetch, connectors::MediaChunk& chunk,
                   connectors::MediaFetchDone& done) override {
    asked.push_back(fetch);
    held.push_back({std::move(chunk), std::move(done)});
    return true;
  }

  // Answers the oldest download: `bytes` in pieces of 100 KiB (while the receiver takes
  // them), then `result`, through the loop.
  void answer(const std::string& bytes, connectors::MediaFetchResult result = {}) {
    REQUIRE_FALSE(held.empty());
    auto h = std::move(held.front());
    held.pop_front();
    boost::asio::post(m_io, [h = std::move(h), bytes, result = std::move(result)]() mutable {
      constexpr std::size_t k_piece = 100 * 1024;
      for (std::size_t at = 0; at < bytes.size(); at += k_piece) {
        if (!h.chunk(std::string_view(bytes).substr(at, k_piece))) {
          if (result.status == MediaFetchStatus::complete) result.status = MediaFetchStatus::stopped;
          break;
        }
      }
      h.done(std::move(result));
    });
  }

  struct Held {
    connectors::MediaChunk chunk;
    connectors::MediaFetchDone done;
  };
  std::vector<connectors::MediaFetch> asked;
  std::deque<Held> held;

 private:
  boost::asio::io_context& m_io;
};

struct Fixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  boost::asio::io_context io;
  MediaChannel channel{io};
  store::Time now = test::k_t0;
  daemon::MediaFetcherSettings settings;
  std::optional<daemon::MediaFetcher> fetcher;

  Fixture() { settings.parallel = 1; }

  daemon::MediaFetcher& start() {
    fetcher.emplace(daemon::MediaFetcherDeps{db, [this] { return now; },
                                             [this](std::string_view name) -> connectors::Channel* {
                                               return name == "whatsapp" ? &channel : nullptr;
                                             }},
                    settings);
    return *fetcher;
  }

  std::int64_t message(const std::string& id, store::MediaRef file) {
    store::InboundMessage m{"whatsapp", id, "34600000001", "34600000001", "[image]", "{}", "image"};
    m.media.push_back(std::move(file));
    auto stored = store::insert_inbound(db, m, now);
    REQUIRE(stored);
    auto files = store::list_media(db, stored->id);
    REQUIRE(files);
    REQUIRE(files->size() == 1);
    return files->front().id;
  }

  store::MediaRow row(std::int64_t id) {
    auto r = store::find_media(db, id);
    REQUIRE(r);
    return *r;
  }

  void run() {
    io.restart();
    io.run();
  }
};

store::MediaRef photo(std::string sha256 = k_hello) {
  return {store::MediaKind::image, "1013859600285441", "image/jpeg", std::move(sha256), "", false};
}

connectors::MediaFetchResult complete(std::string type = "image/jpeg") {
  return {MediaFetchStatus::complete, "", {}, std::move(type), ""};
}

connectors::MediaFetchResult failed(MediaFetchStatus status, std::string why, std::chrono::milliseconds after = {}) {
  return {status, std::move(why), after, "", ""};
}

}  // namespace

TEST_CASE("media fetcher: what a download's outcome leads to", "[media]") {
  using daemon::FetchDecision;
  using Kind = FetchDecision::Kind;
  struct Row {
    const char* name;
    daemon::FetchFacts facts;
    Kind kind;
    store::MediaState refused_as;
  };
  const auto facts = [](connectors::MediaFetchResult r, int attempts = 1, std::string declared = k_hello,
                        bool over = false, bool write_failed = false) {
    return daemon::FetchFacts{std::move(r), over, write_failed, attempts, 5, std::move(declared), k_hello, 1000};
  };
  const std::vector<Row> rows = {
      {"complete, digest as declared", facts(complete()), Kind::store, store::MediaState::stored},
      {"complete, none declared", facts(complete(), 1, ""), Kind::store, store::MediaState::stored},
      {"complete, another digest", facts(complete(), 1, std::string(64, 'a')), Kind::refuse,
       store::MediaState::mismatch},
      {"stopped at the cap", facts(failed(MediaFetchStatus::stopped, ""), 1, k_hello, true), Kind::refuse,
       store::MediaState::over_cap},
      {"stopped: a chunk not written", facts(failed(MediaFetchStatus::stopped, ""), 1, k_hello, false, true),
       Kind::retry, store::MediaState::pending},
      {"stated too large", facts(failed(MediaFetchStatus::too_large, "52428800 bytes")), Kind::refuse,
       store::MediaState::over_cap},
      {"expired", facts(failed(MediaFetchStatus::expired, "gone")), Kind::refuse, store::MediaState::expired},
      {"refused", facts(failed(MediaFetchStatus::refused, "bad url")), Kind::refuse, store::MediaState::unfetchable},
      {"retry", facts(failed(MediaFetchStatus::retry, "503")), Kind::retry, store::MediaState::pending},
      {"retry, the last attempt", facts(failed(MediaFetchStatus::retry, "503"), 5), Kind::refuse,
       store::MediaState::unfetchable},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    const auto decision = daemon::after_fetch(row.facts);
    CHECK(decision.kind == row.kind);
    if (row.kind == Kind::refuse) CHECK(decision.refused_as == row.refused_as);
  }
  // Backoff: 2 s doubling per attempt, at least Retry-After, at most 10 min.
  CHECK(daemon::after_fetch(facts(failed(MediaFetchStatus::retry, ""), 1)).retry_in == 2s);
  CHECK(daemon::after_fetch(facts(failed(MediaFetchStatus::retry, ""), 3)).retry_in == 8s);
  CHECK(daemon::after_fetch(facts(failed(MediaFetchStatus::retry, "", 30s), 1)).retry_in == 30s);
  auto many = facts(failed(MediaFetchStatus::retry, ""), 19);
  many.max_attempts = 20;
  CHECK(daemon::after_fetch(many).retry_in == 10min);
}

TEST_CASE("media fetcher: a file is fetched, hashed, sniffed and kept in chunks", "[media]") {
  Fixture f;
  // A JPEG's signature then filler: over two store chunks.
  std::string bytes = "\xFF\xD8\xFF\xE0";
  bytes += std::string(600 * 1024, 'x');
  const std::int64_t id = f.message("wamid.1", photo(""));
  f.start().poke();
  REQUIRE(f.channel.asked.size() == 1);
  CHECK(f.channel.asked[0].provider_ref == "1013859600285441");
  CHECK(f.channel.asked[0].max_bytes == f.settings.max_bytes[0]);
  f.channel.answer(bytes, complete());
  f.run();
  const auto r = f.row(id);
  CHECK(r.state == store::MediaState::stored);
  CHECK(r.size == static_cast<std::int64_t>(bytes.size()));
  CHECK(r.sniffed_type == "image/jpeg");
  CHECK_FALSE(r.type_mismatch);
  CHECK(r.sha256.size() == 64);
  std::string back;
  REQUIRE(store::read_media(f.db, id, [&](std::string_view chunk) {
    back += chunk;
    return true;
  }));
  CHECK(back == bytes);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM media_chunks").value() == 3);
  CHECK(f.fetcher->counters().stored == 1);
}

TEST_CASE("media fetcher: a sha256 that is not the declared one is refused, nothing kept", "[media]") {
  Fixture f;
  const std::int64_t id = f.message("wamid.1", photo(std::string(64, 'a')));
  f.start().poke();
  f.channel.answer("hello world", complete());
  f.run();
  const auto r = f.row(id);
  CHECK(r.state == store::MediaState::mismatch);
  CHECK(r.reason.find(k_hello) != std::string::npos);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM media_blobs").value() == 0);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_audit WHERE event = 'media'").value() == 1);
}

TEST_CASE("media fetcher: the digest the channel states when asked counts as declared", "[media]") {
  Fixture f;
  const std::int64_t id = f.message("wamid.1", photo(""));
  f.start().poke();
  auto result = complete();
  result.sha256 = std::string(64, 'b');
  f.channel.answer("hello world", result);
  f.run();
  CHECK(f.row(id).state == store::MediaState::mismatch);
}

TEST_CASE("media fetcher: a declared type the bytes do not show is kept and flagged", "[media]") {
  Fixture f;
  auto file = photo("");
  file.declared_type = "image/png";
  const std::int64_t id = f.message("wamid.1", file);
  f.start().poke();
  f.channel.answer("<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>", complete("image/png"));
  f.run();
  const auto r = f.row(id);
  CHECK(r.state == store::MediaState::stored);
  CHECK(r.sniffed_type == "image/svg+xml");
  CHECK(r.type_mismatch);
}

TEST_CASE("media fetcher: a file over its kind's cap stops at the cap and is recorded over_cap", "[media]") {
  Fixture f;
  f.settings.max_bytes[0] = 200 * 1024;
  const std::int64_t id = f.message("wamid.1", photo(""));
  f.start().poke();
  f.channel.answer(std::string(1024 * 1024, 'x'), complete());
  f.run();
  const auto r = f.row(id);
  CHECK(r.state == store::MediaState::over_cap);
  CHECK(r.reason.find("204800") != std::string::npos);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM media_blobs").value() == 0);
}

TEST_CASE("media fetcher: a failing download is tried again after its backoff, then recorded unfetchable", "[media]") {
  Fixture f;
  f.settings.fetch_attempts = 2;
  const std::int64_t id = f.message("wamid.1", photo(""));
  auto& fetcher = f.start();
  fetcher.poke();
  f.channel.answer("", failed(MediaFetchStatus::retry, "lookup: http 503"));
  f.run();
  CHECK(f.row(id).state == store::MediaState::pending);
  CHECK(f.row(id).reason == "lookup: http 503");
  fetcher.tick();  // not due yet: no new download
  CHECK(f.channel.held.empty());
  f.now += 2s;
  fetcher.tick();
  REQUIRE(f.channel.held.size() == 1);
  f.channel.answer("", failed(MediaFetchStatus::retry, "lookup: http 503"));
  f.run();
  const auto r = f.row(id);
  CHECK(r.state == store::MediaState::unfetchable);
  CHECK(r.attempts == 2);
}

TEST_CASE("media fetcher: the same photo twice is kept once, an expired one is recorded", "[media]") {
  Fixture f;
  const std::int64_t first = f.message("wamid.1", photo());
  const std::int64_t second = f.message("wamid.2", photo());
  auto third_file = photo("");
  third_file.provider_ref = "42";
  const std::int64_t third = f.message("wamid.3", third_file);
  f.start().poke();
  f.channel.answer("hello world", complete());
  f.run();
  f.channel.answer("hello world", complete());
  f.run();
  f.channel.answer("", failed(MediaFetchStatus::expired, "lookup: graph error 100"));
  f.run();
  CHECK(f.row(first).state == store::MediaState::stored);
  CHECK(f.row(second).state == store::MediaState::stored);
  CHECK(f.row(third).state == store::MediaState::expired);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM media_blobs").value() == 1);
  CHECK(store::stored_media_bytes(f.db).value() == 11);
}

TEST_CASE("media fetcher: past the store's total cap, files are recorded over_cap unfetched", "[media]") {
  Fixture f;
  f.settings.max_total_bytes = 11;
  const std::int64_t first = f.message("wamid.1", photo());
  auto other = photo("");
  other.provider_ref = "2";
  const std::int64_t second = f.message("wamid.2", other);
  f.start().poke();
  f.channel.answer("hello world", complete());
  f.run();
  CHECK(f.row(first).state == store::MediaState::stored);
  CHECK(f.row(second).state == store::MediaState::over_cap);
  CHECK(f.channel.asked.size() == 1);
}

TEST_CASE("media fetcher: a fetch cut off half-way is taken again after its lease, kept once", "[media]") {
  Fixture f;
  const std::int64_t id = f.message("wamid.1", photo());
  {
    // The first fetcher gets half the bytes and dies with the download in flight.
    auto& first = f.start();
    first.poke();
    REQUIRE(f.channel.held.size() == 1);
    auto cut = std::move(f.channel.held.front());
    f.channel.held.pop_front();
    CHECK(cut.chunk(std::string(300 * 1024, 'h')));  // one chunk written, the rest waiting
    f.fetcher.reset();
    CHECK(test::query_int(f.db, "SELECT count(*) FROM media_chunks").value() == 1);
  }
  // Another instance (or this one restarted) takes it once the lease has run out.
  f.now += std::chrono::duration_cast<std::chrono::seconds>(f.settings.fetch_timeout) + 61s;
  auto& second = f.start();
  second.poke();
  REQUIRE(f.channel.held.size() == 1);
  f.channel.answer("hello world", complete());
  f.run();
  const auto r = f.row(id);
  CHECK(r.state == store::MediaState::stored);
  CHECK(r.attempts == 2);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM media_blobs").value() == 1);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM media_chunks").value() == 1);
  auto check = store::verify_audit(f.db);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
}

TEST_CASE("media fetcher: a file of a channel that keeps none is recorded unfetchable", "[media]") {
  Fixture f;
  store::InboundMessage m{"imap", "<1@example.test>", "a@example.test", "a@example.test", "x", "{}", ""};
  m.media.push_back({store::MediaKind::document, "2", "application/pdf", "", "a.pdf", false});
  auto stored = store::insert_inbound(f.db, m, f.now);
  REQUIRE(stored);
  f.start().poke();
  auto files = store::list_media(f.db, stored->id);
  REQUIRE(files);
  CHECK(files->front().state == store::MediaState::unfetchable);
  CHECK(files->front().reason == "channel imap keeps no files");
}
