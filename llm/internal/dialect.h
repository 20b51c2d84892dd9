#pragma once
#ifndef DISPATCHD_INTERNAL_LLM
#error "llm/internal/ is private to llm/: include the module's public headers instead"
#endif
// Internal to llm/: what differs between providers. A dialect builds its request and reads
// a 2xx body; everything else (statuses, transport errors, timing) is shared in
// http_provider.cpp. Also the request pieces the three dialects share. Bodies are written
// with common/json_out.h and read with common/json_access.h.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "common/json_access.h"
#include "common/json_out.h"
#include "llm/providers.h"
#include "net/http.h"

namespace dispatchd::llm::detail {

// How a documented 2xx answer ended. Only `text` goes on to the validator; each other
// ending is the error class of the same name (http_provider.cpp maps them).
enum class Ending {
  text,       // `output` is the answer
  truncated,  // the output limit was hit: `output` is the partial text
  blocked,    // a content filter withheld the prompt or the reply
  refused,    // the model declined
  no_text,    // nothing to validate: only tool calls, an empty turn, another finish reason
};

// A 2xx body, read.
struct Reply {
  // text: the answer. Otherwise what came back, if anything: the provider's or the model's
  // own words for a refusal or a block first, else the partial text.
  std::string output;
  std::string finish_reason;  // as written; a blocked Gemini prompt: its blockReason
  Ending ending = Ending::text;
  std::string why;  // blocked, refused, no_text: one line naming the cause in the provider's terms
  Usage usage;
};

struct Dialect {
  std::string_view name;
  net::HttpRequest (*build)(const ProviderConfig& config, const CompletionRequest& request);
  // A documented answer, whatever its ending; an error message saying what was missing or
  // malformed when the body is not the documented JSON (bad_response).
  std::expected<Reply, std::string> (*parse)(std::string_view body);
};

const Dialect& openai_dialect();
const Dialect& gemini_dialect();
const Dialect& anthropic_dialect();

// {"role": role, "content": content}: a chat message in OpenAI's and Anthropic's shape.
void write_message(JsonOut& out, std::string_view role, std::string_view content);
// Writes the member "content" of a chat message for a turn that carries files: an array of
// the turn's text and its files, in the dialect's shape.
using ContentWriter = void (*)(JsonOut& out, const Turn& turn);
// Every turn as a chat message, roles "user" and "assistant"; a turn with files has its
// content written by `with_files`.
void write_chat_turns(JsonOut& out, const std::vector<Turn>& turns, ContentWriter with_files);

// `bytes` in base64 (RFC 4648, the standard alphabet, padded): a file as the dialects send it.
std::string base64(std::string_view bytes);

// A POST of `body` as JSON to base_url + path, with the config's timeouts.
net::HttpRequest json_post(const ProviderConfig& config, std::string_view path, std::string body);

// Parses a provider body strictly (iterative, depth-limited); an object, or why not. Walk it
// with common/json_access.h.
[[nodiscard]] std::expected<rapidjson::Document, std::string> parse_body(std::string_view body);

// A value from the body quoted for a message (JSON-escaped, at most 200 code points).
std::string quoted(std::string_view value);

// A token count of a usage object: the member `name` of `holder` as a non-negative integer;
// 0 when the holder or the member is missing, not an integer, or negative.
std::int64_t token_count(json::Lookup holder, std::string_view name);

// A provider total and the part of it billed at another rate, as {total - part, part}: the
// part clamped to [0, total], so that a body whose part exceeds its total never yields a
// negative count.
std::pair<std::int64_t, std::int64_t> split_part(std::int64_t total, std::int64_t part);

}  // namespace dispatchd::llm::detail
