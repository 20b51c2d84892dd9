// OpenAI-compatible chat completions (also Ollama, vLLM, llama.cpp server, LM Studio,
// OpenRouter): POST {base_url}/chat/completions with response_format json_schema strict.
#include "llm/dialect.h"

namespace dispatchd::llm::detail {
namespace {

net::HttpRequest build(const ProviderConfig& config, const CompletionRequest& request) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("model");
  write_string(w, config.model);
  w.Key("messages");
  w.StartArray();
  if (!request.system.empty()) write_message(w, "system", request.system);
  write_chat_turns(w, request.turns);
  w.EndArray();
  w.Key("response_format");
  write_raw(w, request.schema->openai_response_format);
  write_optional_int(w, "max_completion_tokens", config.max_output_tokens);
  write_optional_double(w, "temperature", config.temperature);
  w.EndObject();
  net::HttpRequest http = json_post(config, "/chat/completions", {buffer.GetString(), buffer.GetSize()});
  if (!config.api_key.empty()) http.headers.add("Authorization", "Bearer " + config.api_key);
  return http;
}

std::expected<Reply, std::string> parse(std::string_view body) {
  auto doc = parse_body(body);
  if (!doc) return std::unexpected(doc.error());
  const rapidjson::Value* choices = array_member(*doc, "choices");
  if (!choices || choices->Empty() || !(*choices)[0].IsObject()) return std::unexpected("no choices[0]");
  const rapidjson::Value& choice = (*choices)[0];
  const rapidjson::Value* message = object_member(choice, "message");
  if (!message) return std::unexpected("no choices[0].message");
  Reply reply;
  reply.finish_reason = string_member(choice, "finish_reason").value_or("");
  reply.truncated = reply.finish_reason == "length";
  // A strict-mode refusal comes instead of content; the validator then rejects its text.
  auto content = string_member(*message, "content");
  if (!content) content = string_member(*message, "refusal");
  if (!content) return std::unexpected("choices[0].message has neither content nor refusal");
  reply.output = std::move(*content);
  const rapidjson::Value* usage = object_member(*doc, "usage");
  reply.usage = {count_member(usage, "prompt_tokens"), count_member(usage, "completion_tokens")};
  return reply;
}

}  // namespace

const Dialect& openai_dialect() {
  static const Dialect dialect{"openai", &build, &parse};
  return dialect;
}

}  // namespace dispatchd::llm::detail
