#pragma once
// One model call, provider-neutral: what the agent loop sends (system text, turns, the
// output contract) and what it gets back (the raw text for the validator, finish reason,
// tokens, latency), or an error value whose class says whether to retry.
//
// Implementations: make_provider() (providers.h) for OpenAI-compatible, Gemini and
// Anthropic over a net::Transport; RetryingProvider (retry.h) and LimitedProvider
// (limiter.h) wrap any Provider.

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dispatchd::catalog {
class Catalog;
}

namespace dispatchd::llm {

// The output contract in every provider's dialect, rendered once per catalog (the
// catalog's renderers; compact JSON text).
struct OutputSchema {
  std::string name;                    // OpenAI's json_schema name, Anthropic's tool name
  std::string description;             // Anthropic's tool description
  std::string json_schema;             // JSON Schema: Anthropic's tool input_schema
  std::string openai_response_format;  // the whole `response_format` value
  std::string gemini_schema;           // `generationConfig.responseSchema`
};

std::shared_ptr<const OutputSchema> output_schema(const catalog::Catalog& catalog);

enum class Role { user, assistant };

// A customer's file the model reads with a user turn: an image, a PDF document or audio, of a
// content type the provider's dialect takes (llm/media.h says which, and the size limits).
// The bytes are shared, not copied, by every request that carries them (re-asks, retries,
// routes); each dialect base64-encodes them into the body when it builds the request, so a
// request holds the file once more, encoded, for as long as it is sent.
struct Attachment {
  std::string content_type;                  // its essence, e.g. "image/jpeg", "application/pdf", "audio/ogg"
  std::string filename;                      // as the customer named it; may be empty
  std::shared_ptr<const std::string> bytes;  // REQUIRES: non-null
};

struct Turn {
  Role role = Role::user;
  std::string text;
  std::vector<Attachment> files = {};  // user turns only: read with the text
};

// Which provider and model answered (CallInfo's), e.g. to ask the same one again.
struct ProviderModel {
  std::string provider;
  std::string model;
  bool operator==(const ProviderModel&) const = default;
};

struct CompletionRequest {
  std::string system;                          // system prompt + catalog prompt; may be empty
  std::vector<Turn> turns;                     // starts with a user turn; user and assistant alternate
  std::shared_ptr<const OutputSchema> schema;  // REQUIRES: non-null
  // A re-ask: the provider and model whose answer the turns quote. A router (llm/router.h)
  // asks that one again while it answers; a single provider ignores it.
  std::optional<ProviderModel> prefer = std::nullopt;
};

// The tokens a call was billed for, each in exactly one field whatever the provider, so that
// the fields add up to the billed total and each has one rate (llm/cost.h):
//                        openai                      gemini                   anthropic
//   input_tokens         prompt_tokens - cached      promptTokenCount - cached input_tokens
//   cached_input_tokens  prompt_tokens_details       cachedContentTokenCount   cache_read_input_tokens
//                        .cached_tokens
//   cache_write_tokens   0 (no such charge)          0                         cache_creation_input_tokens
//   output_tokens        completion_tokens - reasoning candidatesTokenCount    output_tokens (thinking included:
//                                                                                not reported apart)
//   reasoning_tokens     completion_tokens_details   thoughtsTokenCount        0
//                        .reasoning_tokens
// A count the body leaves out is 0; a subset larger than its total is clamped to the total.
struct Usage {
  std::int64_t input_tokens = 0;         // input at the input rate
  std::int64_t output_tokens = 0;        // the answer, at the output rate
  std::int64_t cached_input_tokens = 0;  // input read from the provider's cache, at the cached-input rate
  std::int64_t cache_write_tokens = 0;   // input written to the provider's cache, at the cache-write rate
  std::int64_t reasoning_tokens = 0;     // thinking, at the output rate, not in output_tokens

  bool operator==(const Usage&) const = default;
};

// What the attempts table records about a call, whatever its outcome.
struct CallInfo {
  std::string provider;  // "openai", "gemini" or "anthropic"
  std::string model;
  std::string request_summary;  // e.g. "POST /v1/messages model=... turns=3 system=812B body=4120B"; no secrets
  std::chrono::milliseconds latency{0};  // the HTTP exchange that produced this answer
  std::chrono::milliseconds elapsed{0};  // the whole call, retries and backoff waits included
  int http_attempts = 0;                 // HTTP requests sent for this call
};

struct Completion {
  std::string output;         // the model's raw text, for the validator (Anthropic: the tool input as JSON)
  std::string finish_reason;  // as the provider wrote it: "stop", "STOP", "tool_use", ...
  Usage usage;
  CallInfo info;
};

enum class ErrorClass {
  transport,     // no answer: connect failed, timed out, connection dropped (retried)
  rate_limited,  // 429 (retried, honouring Retry-After)
  server,        // 5xx (retried)
  truncated,     // the model hit its output limit: length / MAX_TOKENS / max_tokens (never repaired)
  bad_response,  // a 2xx body that is not the provider's documented JSON, or too large
  client,        // any other 4xx, e.g. 401 bad key, 400 bad request (not retried)
  // A documented 2xx answer with no text for the validator (not retried, never repaired):
  blocked,  // a content filter withheld the prompt or the reply: Gemini finishReason SAFETY
            // (and kin) or promptFeedback.blockReason, OpenAI/Azure finish_reason content_filter
  refused,  // the model declined: OpenAI message.refusal, Anthropic stop_reason refusal
  no_text,  // nothing else to validate: only tool calls, an empty turn, Gemini OTHER and kin
  // Not sent: the provider's breaker is open (llm/breaker.h) and the call waited for it to
  // close as long as it may (not retried here; the message waits like after a transport failure).
  circuit_open,
};

std::string_view to_string(ErrorClass error_class);

// transport, rate_limited and server: worth the same request again later.
bool is_retryable(ErrorClass error_class);

struct ProviderError {
  ErrorClass error_class = ErrorClass::transport;
  std::string message;                                   // one line; the API key is never in it
  int http_status = 0;                                   // 0 when no HTTP response arrived
  std::optional<std::chrono::milliseconds> retry_after;  // from Retry-After / retry-after-ms
  // truncated, blocked, refused, no_text (a documented answer with no text to validate):
  std::string output;         // what came back: the partial text, the refusal or block text; may be empty
  std::string finish_reason;  // as the provider wrote it (a blocked Gemini prompt: its blockReason)
  Usage usage;                // the tokens billed for it
  CallInfo info;
};

using CompletionResult = std::expected<Completion, ProviderError>;
using CompletionCallback = std::move_only_function<void(CompletionResult)>;

class Provider {
 public:
  virtual ~Provider() = default;
  // Starts one logical call. `done` is called exactly once, on the event loop, and never
  // from inside complete(). The provider may be destroyed while calls are pending; they
  // still complete (as long as the event loop and the transport live).
  virtual void complete(CompletionRequest request, CompletionCallback done) = 0;
  virtual const std::string& name() const = 0;  // "openai", "gemini", "anthropic"
  virtual const std::string& model() const = 0;
};

}  // namespace dispatchd::llm
