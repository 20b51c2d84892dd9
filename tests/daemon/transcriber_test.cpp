// The transcriber against a scripted transport on a real store: a kept voice note's bytes
// go out in the request, a 503 is tried again at its time, a 400 fails at once, the last
// attempt's failure is final, and each ending pokes the agent.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <string>

#include "daemon/transcriber.h"
#include "store/inbox.h"
#include "store/media.h"
#include "store/migrations.h"
#include "tests/fakes/fake_transport.h"
#include "tests/io_run.h"
#include "tests/store/store_fixture.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

using test::k_t0;

// A voice note stored and its file kept for transcription; returns the file's id.
std::int64_t kept_voice(store::Database& db, const std::string& id, const std::string& bytes) {
  store::InboundMessage m{"whatsapp", id, "15551234567", "15551234567", "[voice message]", "{}", "audio"};
  m.media.push_back({store::MediaKind::audio, "media." + id, "audio/ogg; codecs=opus", "", "", true});
  REQUIRE(store::insert_inbound(db, m, k_t0));
  auto file = store::claim_media(db, "fetcher", k_t0, 60s);
  REQUIRE(file);
  REQUIRE(*file);
  auto writer = store::BlobWriter::begin(db, (*file)->id, k_t0);
  REQUIRE(writer);
  for (std::size_t at = 0; at < bytes.size(); at += store::k_media_chunk_bytes)
    REQUIRE(writer->append(std::string_view(bytes).substr(at, store::k_media_chunk_bytes)));
  REQUIRE(store::finish_media(db, (*file)->id, *writer, {store::sha256_hex(bytes), "audio/ogg", false, true}, k_t0));
  return (*file)->id;
}

struct Rig {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  boost::asio::io_context io;
  fakes::FakeTransport transport{io};
  store::Time now = k_t0;
  int pokes = 0;
  daemon::Transcriber transcriber{{db, transport, [this] { return now; }, [this](std::int64_t) { ++pokes; }},
                                  {{"http://127.0.0.1:9/v1", "whisper-1", "sk-t", 5s, 1s, 3}, 512 * 1024, "w1", 2}};

  store::MediaRow row(std::int64_t id) {
    auto found = store::find_media(db, id);
    REQUIRE(found);
    return *found;
  }
  void settle(std::size_t requests) {
    transcriber.poke();
    test::run_until(io, [&] { return transport.requests().size() >= requests; });
    io.restart();
    io.poll();
  }
};

}  // namespace

TEST_CASE("transcriber: the kept bytes go out, a 503 is retried at its time, then the transcript is kept",
          "[transcription]") {
  Rig r;
  const std::string bytes = std::string("OggS\0\0voice", 11) + std::string(300 * 1024, '\x7f');  // over one chunk
  const std::int64_t id = kept_voice(r.db, "wamid.A", bytes);
  r.transport.push_response(503, "busy", {{"Retry-After", "5"}});
  r.transport.push_response(200, R"({"text": "hola, mi pedido"})");
  r.settle(1);
  const auto& first = r.transport.requests().at(0);
  CHECK(first.url == "http://127.0.0.1:9/v1/audio/transcriptions");
  CHECK(first.headers.get("Authorization") == "Bearer sk-t");
  CHECK(first.body.find(bytes) != std::string::npos);
  CHECK(r.row(id).transcript_state == store::TranscriptState::pending);
  CHECK(r.row(id).transcript_reason.find("HTTP 503") == 0);
  CHECK(r.pokes == 0);
  // Not before the Retry-After.
  r.now = k_t0 + 4s;
  r.transcriber.tick();
  r.io.poll();
  CHECK(r.transport.requests().size() == 1);
  r.now = k_t0 + 5s;
  r.settle(2);
  const auto done = r.row(id);
  CHECK(done.transcript_state == store::TranscriptState::done);
  CHECK(done.transcript == "hola, mi pedido");
  CHECK(done.transcript_attempts == 2);
  CHECK(r.pokes == 1);
  CHECK(r.transcriber.counters().done == 1);
  CHECK(r.transcriber.counters().retried == 1);
}

TEST_CASE("transcriber: a 400 fails at once, retries end failed at the last attempt", "[transcription]") {
  Rig r;
  const std::int64_t refused = kept_voice(r.db, "wamid.A", "OggS refused");
  r.transport.push_response(400, R"({"error": {"message": "Invalid file format."}})");
  r.settle(1);
  CHECK(r.row(refused).transcript_state == store::TranscriptState::failed);
  CHECK(r.row(refused).transcript_reason == "HTTP 400: \"Invalid file format.\"");
  CHECK(r.pokes == 1);
  const std::int64_t down = kept_voice(r.db, "wamid.B", "OggS down");
  for (int i = 0; i < 3; ++i) r.transport.push_error(net::TransportErrorKind::connect_failed, "refused");
  r.settle(2);
  r.now += 10min;
  r.settle(3);
  r.now += 10min;
  r.settle(4);
  const auto failed = r.row(down);
  CHECK(failed.transcript_state == store::TranscriptState::failed);
  CHECK(failed.transcript_attempts == 3);
  CHECK(failed.transcript_reason == "connect_failed: refused (after 3 attempts)");
  CHECK(r.transcriber.counters().failed == 2);
  CHECK(r.pokes == 2);
}

TEST_CASE("transcriber: a file larger than the audio cap is failed unsent", "[transcription]") {
  Rig r;
  const std::int64_t big = kept_voice(r.db, "wamid.A", std::string(600 * 1024, 'x'));
  r.transcriber.poke();
  r.io.poll();
  CHECK(r.transport.requests().empty());
  CHECK(r.row(big).transcript_state == store::TranscriptState::failed);
  CHECK(r.row(big).transcript_reason == "larger than media.max_bytes.audio");
}
