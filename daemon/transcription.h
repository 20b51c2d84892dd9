#pragma once
// The transcription client's pure pieces (media.transcription; docs/media.md, "Voice notes
// transcribed"): an OpenAI-compatible speech-to-text request and how its answer is read.
//
//   POST {base_url}/audio/transcriptions            Authorization: Bearer KEY
//   Content-Type: multipart/form-data: model, response_format=json, and the file (its name
//   with the extension of its type, which the endpoint uses to tell the format; its
//   content type as stored)
//   200 {"text": "..."}                             the transcript
//
// The answer, as read_transcription() reads it (a table the tests hold it to):
//   2xx, a JSON object whose "text" is a non-blank string   done
//   2xx, anything else (not JSON, no text, blank text)      failed (permanent)
//   429, 408, 5xx, a transport failure (not too_large)      retry, with the Retry-After when given
//   any other status (400, 401, 404, 413, ...)              failed (permanent)
//   a body past the transport's cap (too_large)             failed
// after_transcription() then turns a retry into the next attempt's time (2 s doubling per
// attempt, at most 10 minutes, never before Retry-After) or, at the last attempt, failed.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "net/http.h"

namespace dispatchd::daemon {

struct TranscriptionSettings {
  std::string base_url;  // https://api.openai.com/v1; a trailing '/' is ignored
  std::string model;
  std::string api_key;  // the secret itself (media.transcription.api_key_env): never logged
  std::chrono::milliseconds timeout{60'000};
  std::chrono::milliseconds connect_timeout{10'000};
  int attempts = 5;
};

// One audio file to transcribe.
struct AudioUpload {
  std::int64_t media_id = 0;
  std::string content_type;  // as stored: the sniffed type, else the declared one
  std::string bytes;
};

// The content type the file part carries: `type` without its parameters, lower-case;
// "application/octet-stream" when it is not a plain type/subtype token.
std::string upload_type(std::string_view type);

// The part's file name: "audio-<id>.<ext>", the extension of its type (ogg, mp3, m4a, wav,
// webm, flac, amr, aac; "bin" for another).
std::string upload_name(std::int64_t media_id, std::string_view type);

// The multipart request; `boundary` must not occur in the file's bytes (the caller picks one).
net::HttpRequest transcription_request(const TranscriptionSettings& settings, const AudioUpload& file,
                                       std::string_view boundary);

enum class TranscriptionStatus { done, retry, failed };

struct TranscriptionAnswer {
  TranscriptionStatus status = TranscriptionStatus::failed;
  std::string text;  // done: the transcript
  std::string why;   // retry, failed: one line, never the key
  std::optional<std::chrono::milliseconds> retry_after;
};

// The answer's table (above). `now` reads an HTTP-date Retry-After.
TranscriptionAnswer read_transcription(const net::HttpResult& result, std::chrono::system_clock::time_point now);

// What becomes of the file after an answer.
struct TranscriptionStep {
  TranscriptionStatus status = TranscriptionStatus::failed;
  std::chrono::milliseconds retry_in{0};  // retry: from now
  std::string why;
};

// done stays done; failed stays failed; retry waits 2 s doubling per attempt (at most 10
// min, at least the answer's Retry-After), or is failed once `attempts` (this one included)
// reaches `max_attempts`.
TranscriptionStep after_transcription(const TranscriptionAnswer& answer, int attempts, int max_attempts);

}  // namespace dispatchd::daemon
