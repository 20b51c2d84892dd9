#include "daemon/transcription.h"

#include <algorithm>
#include <array>
#include <utility>

#include "common/backoff.h"
#include "common/json_access.h"
#include "common/strict_json.h"
#include "common/text.h"
#include "net/retry_after.h"

namespace dispatchd::daemon {
namespace {

using Status = TranscriptionStatus;

constexpr std::size_t k_max_answer_bytes = 1 << 20;  // a transcript of a 16 MiB voice note is far less
constexpr Backoff k_transcribe_backoff{std::chrono::seconds(2), std::chrono::minutes(10)};

// The answer's own words from an error body ({"error": {"message": ...}}), else its start.
std::string answer_detail(std::string_view body) {
  if (auto parsed = json::parse_strict(body, {})) {
    if (auto message = json::string_member(json::member(parsed->document, "error"), "message"))
      return text::quote(*message, 200);
  }
  return body.empty() ? std::string("empty body") : text::quote(body, 200);
}

bool is_token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == '_';
}

bool is_blank(std::string_view s) {
  return std::ranges::all_of(s, [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

}  // namespace

std::string upload_type(std::string_view type) {
  type = type.substr(0, type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  while (!type.empty() && type.front() == ' ') type.remove_prefix(1);
  std::string out;
  for (const char c : type) out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  const auto slash = out.find('/');
  const bool plain = slash != std::string::npos && slash > 0 && slash + 1 < out.size() &&
                     out.find('/', slash + 1) == std::string::npos &&
                     std::ranges::all_of(out, [](char c) { return c == '/' || is_token_char(c); });
  return plain ? out : "application/octet-stream";
}

std::string upload_name(std::int64_t media_id, std::string_view type) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 13> k_extensions{{
      {"audio/ogg", "ogg"},
      {"audio/opus", "ogg"},
      {"audio/mpeg", "mp3"},
      {"audio/mp3", "mp3"},
      {"audio/mp4", "m4a"},
      {"audio/x-m4a", "m4a"},
      {"audio/aac", "aac"},
      {"audio/wav", "wav"},
      {"audio/x-wav", "wav"},
      {"audio/webm", "webm"},
      {"audio/flac", "flac"},
      {"audio/amr", "amr"},
      {"video/mp4", "mp4"},
  }};
  const std::string plain = upload_type(type);
  std::string_view extension = "bin";
  for (const auto& [known, ext] : k_extensions)
    if (known == plain) extension = ext;
  return "audio-" + std::to_string(media_id) + "." + std::string(extension);
}

net::HttpRequest transcription_request(const TranscriptionSettings& settings, const AudioUpload& file,
                                       std::string_view boundary) {
  std::string_view base = settings.base_url;
  while (base.ends_with('/')) base.remove_suffix(1);
  const std::string b(boundary);
  const auto field = [&b](std::string_view name, std::string_view value) {
    return "--" + b + "\r\nContent-Disposition: form-data; name=\"" + std::string(name) + "\"\r\n\r\n" +
           std::string(value) + "\r\n";
  };
  net::HttpRequest request;
  request.method = "POST";
  request.url = std::string(base) + "/audio/transcriptions";
  request.headers.add("Content-Type", "multipart/form-data; boundary=" + b);
  request.headers.add("Accept", "application/json");
  if (!settings.api_key.empty()) request.headers.add("Authorization", "Bearer " + settings.api_key);
  std::string& body = request.body;
  body.reserve(file.bytes.size() + 512);
  body += field("model", settings.model);
  body += field("response_format", "json");
  body += "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" +
          upload_name(file.media_id, file.content_type) + "\"\r\nContent-Type: " + upload_type(file.content_type) +
          "\r\n\r\n";
  body += file.bytes;
  body += "\r\n--" + b + "--\r\n";
  request.timeout = settings.timeout;
  request.connect_timeout = settings.connect_timeout;
  request.max_response_bytes = k_max_answer_bytes;
  return request;
}

TranscriptionAnswer read_transcription(const net::HttpResult& result, std::chrono::system_clock::time_point now) {
  TranscriptionAnswer answer;
  if (!result) {
    const bool too_large = result.error().kind == net::TransportErrorKind::too_large;
    answer.status = too_large ? Status::failed : Status::retry;
    answer.why = std::string(net::to_string(result.error().kind)) + ": " + result.error().message;
    return answer;
  }
  const int status = result->status;
  if (status < 200 || status > 299) {
    const bool again = status == 429 || status == 408 || status >= 500;
    answer.status = again ? Status::retry : Status::failed;
    answer.why = "HTTP " + std::to_string(status) + ": " + answer_detail(result->body);
    if (again) answer.retry_after = net::retry_after_of(result->headers, now);
    return answer;
  }
  auto parsed = json::parse_strict(result->body, {});
  if (!parsed) {
    answer.why = "the answer is not JSON: " + parsed.error().message;
    return answer;
  }
  if (!parsed->document.IsObject()) {
    answer.why = "the answer is not a JSON object";
    return answer;
  }
  auto text = json::string_member(parsed->document, "text");
  if (!text) {
    answer.why = "the answer has no \"text\" string";
    return answer;
  }
  if (is_blank(*text)) {
    answer.why = "the transcript is empty (no speech heard)";
    return answer;
  }
  answer.status = Status::done;
  answer.text = std::move(*text);
  return answer;
}

TranscriptionStep after_transcription(const TranscriptionAnswer& answer, int attempts, int max_attempts) {
  switch (answer.status) {
    case Status::done: return {Status::done, {}, {}};
    case Status::failed: return {Status::failed, {}, answer.why};
    case Status::retry: break;
  }
  if (attempts >= max_attempts)
    return {Status::failed, {}, answer.why + " (after " + std::to_string(attempts) + " attempts)"};
  const auto wait = std::max(exponential_backoff(k_transcribe_backoff, attempts),
                             answer.retry_after.value_or(std::chrono::milliseconds(0)));
  return {Status::retry, wait, answer.why};
}

}  // namespace dispatchd::daemon
