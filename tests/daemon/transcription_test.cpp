// The transcription client's pure pieces: the multipart request as OpenAI documents it
// (POST {base_url}/audio/transcriptions, model, response_format, file), and the table of
// answers: done, retried (429, 408, 5xx, transport; Retry-After honoured) or failed.

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "daemon/transcription.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using daemon::TranscriptionStatus;

namespace {

net::HttpResult answer(int status, std::string body, net::Headers headers = {}) {
  return net::HttpResponse{status, std::move(headers), std::move(body)};
}

}  // namespace

TEST_CASE("transcription: the request is OpenAI's multipart form with the file's bytes as stored", "[transcription]") {
  daemon::TranscriptionSettings settings{"https://api.example.test/v1/", "whisper-1", "sk-secret", 45s, 5s, 3};
  const std::string bytes = std::string("OggS\0\x01\xff", 7) + "\r\n--not-the-boundary";
  const auto request =
      daemon::transcription_request(settings, {42, "audio/ogg; codecs=opus", bytes}, "dispatchd-b0undary");
  CHECK(request.method == "POST");
  CHECK(request.url == "https://api.example.test/v1/audio/transcriptions");
  CHECK(request.headers.get("Content-Type") == "multipart/form-data; boundary=dispatchd-b0undary");
  CHECK(request.headers.get("Authorization") == "Bearer sk-secret");
  CHECK(request.timeout == 45s);
  CHECK(request.connect_timeout == 5s);
  const std::string expected =
      "--dispatchd-b0undary\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n"
      "--dispatchd-b0undary\r\nContent-Disposition: form-data; name=\"response_format\"\r\n\r\njson\r\n"
      "--dispatchd-b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"audio-42.ogg\"\r\n"
      "Content-Type: audio/ogg\r\n\r\n" +
      bytes + "\r\n--dispatchd-b0undary--\r\n";
  CHECK(request.body == expected);
  // Without a key no Authorization header goes out (a local server).
  settings.api_key.clear();
  CHECK_FALSE(daemon::transcription_request(settings, {1, "audio/mpeg", "x"}, "b").headers.get("Authorization"));
}

TEST_CASE("transcription: the part's type and name come from the stored type", "[transcription]") {
  struct Row {
    const char* stored;
    const char* type;
    const char* name;
  };
  const Row rows[] = {
      {"audio/ogg; codecs=opus", "audio/ogg", "audio-7.ogg"},
      {"Audio/MPEG", "audio/mpeg", "audio-7.mp3"},
      {"audio/mp4", "audio/mp4", "audio-7.m4a"},
      {"audio/x-wav", "audio/x-wav", "audio-7.wav"},
      {"audio/webm", "audio/webm", "audio-7.webm"},
      {"audio/amr", "audio/amr", "audio-7.amr"},
      {"audio/x-unknown", "audio/x-unknown", "audio-7.bin"},
      {"", "application/octet-stream", "audio-7.bin"},
      {"audio/ogg\r\nX-Injected: 1", "application/octet-stream", "audio-7.bin"},
      {"audio\"/ogg", "application/octet-stream", "audio-7.bin"},
  };
  for (const auto& row : rows) {
    INFO(row.stored);
    CHECK(daemon::upload_type(row.stored) == row.type);
    CHECK(daemon::upload_name(7, row.stored) == row.name);
  }
}

TEST_CASE("transcription: the answers' table", "[transcription]") {
  const auto now = std::chrono::system_clock::now();
  struct Row {
    const char* what;
    net::HttpResult result;
    TranscriptionStatus status;
    std::string text_or_why;
  };
  const Row rows[] = {
      {"the documented answer", answer(200, R"({"text": "Hola, mi pedido no llegó"})"), TranscriptionStatus::done,
       "Hola, mi pedido no llegó"},
      {"extra members are fine", answer(200, R"({"text": "hi", "usage": {"type": "duration", "seconds": 3}})"),
       TranscriptionStatus::done, "hi"},
      {"not JSON", answer(200, "hi there"), TranscriptionStatus::failed, "not JSON"},
      {"no text", answer(200, R"({"transcript": "hi"})"), TranscriptionStatus::failed, "no \"text\""},
      {"text not a string", answer(200, R"({"text": 3})"), TranscriptionStatus::failed, "no \"text\""},
      {"an array", answer(200, R"(["hi"])"), TranscriptionStatus::failed, "not a JSON object"},
      {"blank text", answer(200, R"({"text": "  \n"})"), TranscriptionStatus::failed, "empty"},
      {"a duplicate key", answer(200, R"({"text": "a", "text": "b"})"), TranscriptionStatus::failed, "not JSON"},
      {"rate limited", answer(429, R"({"error": {"message": "slow down"}})"), TranscriptionStatus::retry,
       "HTTP 429: \"slow down\""},
      {"timed out at the server", answer(408, ""), TranscriptionStatus::retry, "HTTP 408: empty body"},
      {"unavailable", answer(503, "busy"), TranscriptionStatus::retry, "HTTP 503: \"busy\""},
      {"a bad request", answer(400, R"({"error": {"message": "Invalid file format."}})"), TranscriptionStatus::failed,
       "HTTP 400: \"Invalid file format.\""},
      {"the key refused", answer(401, "{}"), TranscriptionStatus::failed, "HTTP 401"},
      {"too large for the endpoint", answer(413, ""), TranscriptionStatus::failed, "HTTP 413"},
      {"no connection", std::unexpected(net::TransportError{net::TransportErrorKind::connect_failed, "refused"}),
       TranscriptionStatus::retry, "connect_failed: refused"},
      {"timed out", std::unexpected(net::TransportError{net::TransportErrorKind::timed_out, "60 s"}),
       TranscriptionStatus::retry, "timed_out"},
      {"an answer past the cap", std::unexpected(net::TransportError{net::TransportErrorKind::too_large, "big"}),
       TranscriptionStatus::failed, "too_large"},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    const auto read = daemon::read_transcription(row.result, now);
    CHECK(read.status == row.status);
    if (row.status == TranscriptionStatus::done) {
      CHECK(read.text == row.text_or_why);
    } else {
      CHECK(read.text.empty());
      CHECK(read.why.find(row.text_or_why) != std::string::npos);
    }
  }
  // Retry-After, in seconds, is kept for the next attempt.
  const auto later = daemon::read_transcription(answer(503, "", {{"Retry-After", "120"}}), now);
  REQUIRE(later.retry_after);
  CHECK(*later.retry_after == 120s);
}

TEST_CASE("transcription: what an answer leads to, by attempts", "[transcription]") {
  const daemon::TranscriptionAnswer done{TranscriptionStatus::done, "hi", "", std::nullopt};
  const daemon::TranscriptionAnswer failed{TranscriptionStatus::failed, "", "HTTP 400", std::nullopt};
  const daemon::TranscriptionAnswer retry{TranscriptionStatus::retry, "", "HTTP 503", std::nullopt};
  const daemon::TranscriptionAnswer retry_after{TranscriptionStatus::retry, "", "HTTP 429", 300'000ms};
  struct Row {
    const daemon::TranscriptionAnswer* answer;
    int attempts;
    TranscriptionStatus status;
    std::chrono::milliseconds wait;
  };
  const Row rows[] = {
      {&done, 1, TranscriptionStatus::done, 0ms},          {&done, 5, TranscriptionStatus::done, 0ms},
      {&failed, 1, TranscriptionStatus::failed, 0ms},      {&retry, 1, TranscriptionStatus::retry, 2s},
      {&retry, 2, TranscriptionStatus::retry, 4s},         {&retry, 4, TranscriptionStatus::retry, 16s},
      {&retry, 5, TranscriptionStatus::failed, 0ms},       {&retry_after, 1, TranscriptionStatus::retry, 300s},
      {&retry_after, 5, TranscriptionStatus::failed, 0ms},
  };
  for (const auto& row : rows) {
    INFO(row.answer->why << " attempt " << row.attempts);
    const auto step = daemon::after_transcription(*row.answer, row.attempts, 5);
    CHECK(step.status == row.status);
    CHECK(step.retry_in == row.wait);
    if (row.status == TranscriptionStatus::failed) CHECK(step.why.find(row.answer->why) == 0);
  }
  CHECK(daemon::after_transcription(retry, 5, 5).why == "HTTP 503 (after 5 attempts)");
  // Past ten doublings the wait stays at 10 minutes.
  CHECK(daemon::after_transcription(retry, 15, 20).retry_in == 10min);
}
