// Gemini: POST {base_url}/v1beta/models/{model}:generateContent with systemInstruction and
// generationConfig.responseMimeType application/json + responseSchema.
#include "llm/dialect.h"

namespace dispatchd::llm::detail {
namespace {

void write_text_parts(Writer& w, std::string_view text) {
  w.Key("parts");
  w.StartArray();
  w.StartObject();
  w.Key("text");
  write_string(w, text);
  w.EndObject();
  w.EndArray();
}

net::HttpRequest build(const ProviderConfig& config, const CompletionRequest& request) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  if (!request.system.empty()) {
    w.Key("systemInstruction");
    w.StartObject();
    write_text_parts(w, request.system);
    w.EndObject();
  }
  w.Key("contents");
  w.StartArray();
  for (const Turn& turn : request.turns) {
    w.StartObject();
    w.Key("role");
    w.String(turn.role == Role::user ? "user" : "model");
    write_text_parts(w, turn.text);
    w.EndObject();
  }
  w.EndArray();
  w.Key("generationConfig");
  w.StartObject();
  w.Key("responseMimeType");
  w.String("application/json");
  w.Key("responseSchema");
  write_raw(w, request.schema->gemini_schema);
  write_optional_int(w, "maxOutputTokens", config.max_output_tokens);
  write_optional_double(w, "temperature", config.temperature);
  w.EndObject();
  w.EndObject();
  net::HttpRequest http =
      json_post(config, "/v1beta/models/" + config.model + ":generateContent", {buffer.GetString(), buffer.GetSize()});
  if (!config.api_key.empty()) http.headers.add("x-goog-api-key", config.api_key);
  return http;
}

std::expected<Reply, std::string> parse(std::string_view body) {
  auto doc = parse_body(body);
  if (!doc) return std::unexpected(doc.error());
  const rapidjson::Value* candidates = array_member(*doc, "candidates");
  if (!candidates || candidates->Empty() || !(*candidates)[0].IsObject()) {
    const rapidjson::Value* feedback = object_member(*doc, "promptFeedback");
    const auto reason = feedback ? string_member(*feedback, "blockReason") : std::nullopt;
    return std::unexpected(reason ? "no candidates (prompt blocked: " + *reason + ")" : "no candidates[0]");
  }
  const rapidjson::Value& candidate = (*candidates)[0];
  Reply reply;
  reply.finish_reason = string_member(candidate, "finishReason").value_or("");
  reply.truncated = reply.finish_reason == "MAX_TOKENS";
  const rapidjson::Value* content = object_member(candidate, "content");
  const rapidjson::Value* parts = content ? array_member(*content, "parts") : nullptr;
  if (!parts && !reply.truncated) return std::unexpected("no candidates[0].content.parts");
  // The text is the concatenation of the text parts; thought summaries are not the answer.
  if (parts) {
    for (const auto& part : parts->GetArray()) {
      const rapidjson::Value* thought = member(part, "thought");
      if (thought && thought->IsBool() && thought->GetBool()) continue;
      reply.output += string_member(part, "text").value_or("");
    }
  }
  const rapidjson::Value* usage = object_member(*doc, "usageMetadata");
  reply.usage = {count_member(usage, "promptTokenCount"), count_member(usage, "candidatesTokenCount")};
  return reply;
}

}  // namespace

const Dialect& gemini_dialect() {
  static const Dialect dialect{"gemini", &build, &parse};
  return dialect;
}

}  // namespace dispatchd::llm::detail
