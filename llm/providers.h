#pragma once
// The three HTTP providers. Each builds its documented request and parses its documented
// response; one shared path classifies HTTP statuses and transport failures:
//   openai     POST {base_url}/chat/completions              Authorization: Bearer KEY
//              response_format json_schema (strict), prompt_cache_key when configured;
//              choices[0].message.content (a string, or an array whose text parts are joined)
//   gemini     POST {base_url}/v1beta/models/{model}:generateContent   x-goog-api-key: KEY
//              systemInstruction, contents (user/model), generationConfig.responseSchema;
//              candidates[0].content.parts[].text
//   anthropic  POST {base_url}/v1/messages    x-api-key: KEY, anthropic-version: 2023-06-01
//              the contract as one forced tool (tool_choice); the tool_use block's input,
//              serialized as JSON, is the output
// A documented answer without text to validate is an error naming why (ErrorClass blocked,
// refused, no_text), with the finish reason, the tokens and the provider's words; a body
// that is not the documented JSON is bad_response.
// A provider makes one HTTP request per call (wrap it in RetryingProvider for retries).

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "llm/provider.h"
#include "net/http.h"

namespace dispatchd::llm {

enum class ProviderKind { openai, gemini, anthropic };

// "openai", "gemini" or "anthropic" (config's llm.provider); nullopt for anything else.
std::optional<ProviderKind> parse_provider_kind(std::string_view name);
std::string_view to_string(ProviderKind kind);

struct ProviderConfig {
  ProviderKind kind = ProviderKind::openai;
  // As the provider documents it; a trailing '/' is ignored. https://api.openai.com/v1,
  // https://generativelanguage.googleapis.com, https://api.anthropic.com.
  std::string base_url{};
  std::string model{};
  // The secret itself: the caller reads it from the variable named by llm.api_key_env.
  // Never logged; removed from provider error messages. Empty: no auth header (local servers).
  std::string api_key{};
  std::chrono::milliseconds timeout{60'000};  // one HTTP exchange (llm.timeout_ms)
  std::chrono::milliseconds connect_timeout{10'000};
  std::optional<int> max_output_tokens{};  // Anthropic requires one: 1024 when unset
  std::optional<double> temperature{};
  // openai only: send `prompt_cache_key`, one per system text and schema, so that requests
  // sharing that prefix are routed to the same prompt cache (llm.prompt_cache_key). A server
  // that refuses unknown fields answers every such request with a 4xx (ErrorClass::client).
  bool prompt_cache_key = false;
  std::size_t max_response_bytes = 4u << 20;  // a larger body is bad_response
};

// REQUIRES: `transport` outlives the provider and its pending calls.
std::unique_ptr<Provider> make_provider(ProviderConfig config, net::Transport& transport);

}  // namespace dispatchd::llm
