// OpenAI-compatible chat completions (also Ollama, vLLM, llama.cpp server, LM Studio,
// OpenRouter): POST {base_url}/chat/completions with response_format json_schema strict.
#include <array>
#include <cstdint>

#include "common/json_access.h"
#include "common/text.h"
#include "llm/internal/dialect.h"

namespace dispatchd::llm::detail {
namespace {

using json::array_member;
using json::member;
using json::object_member;
using json::string_member;

// FNV-1a, 64 bits: the same value from every build and instance (std::hash promises neither).
// A routing key, not a digest: a collision only sends two catalogs' requests to one cache.
void fnv1a(std::uint64_t& hash, std::string_view bytes) {
  for (const unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3;
  }
}

// The request's prompt_cache_key: "dispatchd-" and 16 hex digits of a hash of the system text
// and the response format, the part every request for one catalog starts with (docs/agent.md,
// "The prompt cache"). Nothing of the conversation goes in, so the key is the same for every
// customer, conversation and instance, and another for another prompt or catalog.
std::string prompt_cache_key(const CompletionRequest& request) {
  std::uint64_t hash = 0xcbf29ce484222325;
  // The length first: a system text can never pass for part of the schema, or the reverse.
  fnv1a(hash, std::to_string(request.system.size()) + ":");
  fnv1a(hash, request.system);
  fnv1a(hash, request.schema->openai_response_format);
  std::array<unsigned char, 8> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(hash >> (56 - 8 * i));
  return "dispatchd-" + text::hex(bytes);
}

// A user turn with images: its text, then each image as a data URL, as OpenAI documents
// image input for chat completions (content parts text and image_url).
void openai_content(JsonOut& out, const Turn& turn) {
  out.begin_array("content").begin_object().field("type", "text").field("text", turn.text).end_object();
  for (const Attachment& file : turn.files) {
    out.begin_object().field("type", "image_url").begin_object("image_url");
    out.field("url", "data:" + file.content_type + ";base64," + base64(*file.bytes)).end_object().end_object();
  }
  out.end_array();
}

net::HttpRequest build_openai(const ProviderConfig& config, const CompletionRequest& request) {
  JsonOut out;
  out.begin_object().field("model", config.model);
  if (config.prompt_cache_key) out.field("prompt_cache_key", prompt_cache_key(request));
  out.begin_array("messages");
  if (!request.system.empty()) write_message(out, "system", request.system);
  write_chat_turns(out, request.turns, &openai_content);
  out.end_array().raw("response_format", request.schema->openai_response_format);
  out.field_if_set("max_completion_tokens", config.max_output_tokens).field_if_set("temperature", config.temperature);
  net::HttpRequest http = json_post(config, "/chat/completions", out.end_object().str());
  if (!config.api_key.empty()) http.headers.add("Authorization", "Bearer " + config.api_key);
  return http;
}

// The message's text: `content` as a string, or the text parts of `content` as an array
// (Mistral and other servers; thinking parts are not the answer). nullopt when there is
// none (null, absent, or an array without text parts); an error when it has another type.
std::expected<std::optional<std::string>, std::string> content_text(const rapidjson::Value& message) {
  const rapidjson::Value* content = member(message, "content");
  if (!content || content->IsNull()) return std::nullopt;
  if (content->IsString()) return std::string(json::string_of(content));
  if (!content->IsArray()) return std::unexpected("choices[0].message.content is neither text nor parts");
  std::optional<std::string> text;
  for (const auto& part : content->GetArray()) {
    if (string_member(part, "type") == "text") text = text.value_or("") + string_member(part, "text").value_or("");
  }
  return text;
}

// "; filtered: violence (medium)": the categories Azure's content filter stopped.
std::string filtered_categories(const rapidjson::Value& choice) {
  const rapidjson::Value* results = object_member(choice, "content_filter_results");
  if (!results) return "";
  std::string out;
  for (const auto& category : results->GetObject()) {
    if (!json::bool_member(category.value, "filtered").value_or(false)) continue;
    out += (out.empty() ? "; filtered: " : ", ") + std::string(category.name.GetString());
    if (auto severity = string_member(category.value, "severity")) out += " (" + *severity + ")";
  }
  return out;
}

// ", only tool calls: lookup_order \"{...}\"": what the model did instead of answering.
std::string tool_calls(const rapidjson::Value& message) {
  const rapidjson::Value* calls = array_member(message, "tool_calls");
  if (!calls || calls->Empty()) return "";
  const rapidjson::Value* function = object_member((*calls)[0], "function");
  if (!function) return ", only tool calls";
  std::string out = ", only tool calls: " + string_member(*function, "name").value_or("?") + " " +
                    quoted(string_member(*function, "arguments").value_or(""));
  if (calls->Size() > 1) out += " and " + std::to_string(calls->Size() - 1) + " more";
  return out;
}

// Cached tokens are part of prompt_tokens, reasoning tokens part of completion_tokens:
// each is taken out of its total so that no token is counted twice (llm/provider.h's Usage).
Usage openai_usage(const rapidjson::Value* usage) {
  const auto [input, cached] = split_part(token_count(usage, "prompt_tokens"),
                                          token_count(object_member(usage, "prompt_tokens_details"), "cached_tokens"));
  const auto [output, reasoning] =
      split_part(token_count(usage, "completion_tokens"),
                 token_count(object_member(usage, "completion_tokens_details"), "reasoning_tokens"));
  return {.input_tokens = input, .output_tokens = output, .cached_input_tokens = cached, .reasoning_tokens = reasoning};
}

std::expected<Reply, std::string> parse_openai(std::string_view body) {
  auto doc = parse_body(body);
  if (!doc) return std::unexpected(doc.error());
  const rapidjson::Value* choices = array_member(*doc, "choices");
  if (!choices || choices->Empty() || !(*choices)[0].IsObject()) return std::unexpected("no choices[0]");
  const rapidjson::Value& choice = (*choices)[0];
  Reply reply;
  reply.finish_reason = string_member(choice, "finish_reason").value_or("");
  reply.usage = openai_usage(object_member(*doc, "usage"));
  const std::string finish = " (finish_reason " + reply.finish_reason;
  const rapidjson::Value* message = object_member(choice, "message");
  if (!message && reply.finish_reason == "content_filter") {
    // Azure OpenAI may withhold the whole message, not only its content: still a filtered
    // answer, billed, with the filter's verdicts.
    reply.ending = Ending::blocked;
    reply.why = "the provider's content filter withheld the reply" + finish + filtered_categories(choice) + ")";
    return reply;
  }
  if (!message) return std::unexpected("no choices[0].message");
  auto text = content_text(*message);
  if (!text) return std::unexpected(text.error());
  reply.output = text->value_or("");
  if (reply.finish_reason == "length") {
    reply.ending = Ending::truncated;
  } else if (auto refusal = string_member(*message, "refusal")) {
    // Structured outputs: the model declined in its own words instead of the object.
    reply.ending = Ending::refused;
    reply.why = "the model refused: " + quoted(*refusal);
    reply.output = std::move(*refusal);
  } else if (reply.finish_reason == "content_filter") {
    reply.ending = Ending::blocked;
    reply.why = "the provider's content filter withheld the reply" + finish + filtered_categories(choice) + ")";
  } else if (!*text) {
    reply.ending = Ending::no_text;
    reply.why = "the reply has no text" + tool_calls(*message) + finish + ")";
  }
  return reply;
}

}  // namespace

const Dialect& openai_dialect() {
  static const Dialect dialect{"openai", &build_openai, &parse_openai};
  return dialect;
}

}  // namespace dispatchd::llm::detail
