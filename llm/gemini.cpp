// Gemini: POST {base_url}/v1beta/models/{model}:generateContent with systemInstruction and
// generationConfig.responseMimeType application/json + responseSchema.
#include <algorithm>
#include <array>

#include "common/json_access.h"
#include "llm/internal/dialect.h"

namespace dispatchd::llm::detail {
namespace {

using json::array_member;
using json::member;
using json::object_member;
using json::string_member;

// "parts": [{"text": text}]
void write_text_parts(JsonOut& out, std::string_view text) {
  out.begin_array("parts").begin_object().field("text", text).end_object().end_array();
}

// "parts": each file as inline data ({"inline_data": {"mime_type", "data"}}, base64), then
// {"text": text}: images, PDFs and audio alike, as Gemini's guides send them inline.
void write_parts(JsonOut& out, const Turn& turn) {
  if (turn.files.empty()) return write_text_parts(out, turn.text);
  out.begin_array("parts");
  for (const Attachment& file : turn.files) {
    out.begin_object().begin_object("inline_data").field("mime_type", file.content_type);
    out.field("data", base64(*file.bytes)).end_object().end_object();
  }
  out.begin_object().field("text", turn.text).end_object().end_array();
}

net::HttpRequest build_gemini(const ProviderConfig& config, const CompletionRequest& request) {
  JsonOut out;
  out.begin_object();
  if (!request.system.empty()) {
    out.begin_object("systemInstruction");
    write_text_parts(out, request.system);
    out.end_object();
  }
  out.begin_array("contents");
  for (const Turn& turn : request.turns) {
    out.begin_object().field("role", turn.role == Role::user ? "user" : "model");
    write_parts(out, turn);
    out.end_object();
  }
  out.end_array().begin_object("generationConfig").field("responseMimeType", "application/json");
  out.raw("responseSchema", request.schema->gemini_schema).field_if_set("maxOutputTokens", config.max_output_tokens);
  out.field_if_set("temperature", config.temperature).end_object().end_object();
  net::HttpRequest http = json_post(config, "/v1beta/models/" + config.model + ":generateContent", out.str());
  if (!config.api_key.empty()) http.headers.add("x-goog-api-key", config.api_key);
  return http;
}

// The finish reasons of a candidate a content filter stopped (its content is then unset).
bool is_block(std::string_view finish_reason) {
  static constexpr std::array<std::string_view, 6> k_blocks = {"SAFETY", "RECITATION",         "BLOCKLIST",
                                                               "SPII",   "PROHIBITED_CONTENT", "IMAGE_SAFETY"};
  return std::ranges::find(k_blocks, finish_reason) != k_blocks.end();
}

// "; HARM_CATEGORY_HARASSMENT (MEDIUM)": the safety ratings that blocked, or else the ones
// rated MEDIUM or HIGH, from a candidate or the promptFeedback.
std::string flagged_ratings(const rapidjson::Value& holder) {
  const rapidjson::Value* ratings = array_member(holder, "safetyRatings");
  if (!ratings) return "";
  std::string blocked;
  std::string likely;
  for (const auto& rating : ratings->GetArray()) {
    const std::string probability = string_member(rating, "probability").value_or("");
    const std::string named = string_member(rating, "category").value_or("?") + " (" + probability + ")";
    if (json::bool_member(rating, "blocked").value_or(false)) blocked += (blocked.empty() ? "; " : ", ") + named;
    if (probability == "MEDIUM" || probability == "HIGH") likely += (likely.empty() ? "; " : ", ") + named;
  }
  return blocked.empty() ? likely : blocked;
}

// ": the provider's words", when it gave some (finishMessage, blockReasonMessage).
std::string provider_message(const rapidjson::Value& holder, const char* name) {
  auto message = string_member(holder, name);
  return message ? ": " + quoted(*message) : "";
}

// No candidate: the prompt was blocked (promptFeedback.blockReason), else not the documented JSON.
std::expected<Reply, std::string> prompt_blocked(const rapidjson::Value& doc, Reply reply) {
  const rapidjson::Value* feedback = object_member(doc, "promptFeedback");
  auto reason = feedback ? string_member(*feedback, "blockReason") : std::nullopt;
  if (!reason) return std::unexpected("no candidates[0]");
  reply.ending = Ending::blocked;
  reply.finish_reason = *reason;
  reply.why = "the provider blocked the prompt before the model answered (promptFeedback.blockReason " + *reason +
              flagged_ratings(*feedback) + ")" + provider_message(*feedback, "blockReasonMessage");
  return reply;
}

// promptTokenCount includes the cached content (cachedContentTokenCount); the thoughts
// (thoughtsTokenCount, billed as output) are not in candidatesTokenCount.
Usage gemini_usage(const rapidjson::Value* usage) {
  const auto [input, cached] =
      split_part(token_count(usage, "promptTokenCount"), token_count(usage, "cachedContentTokenCount"));
  return {.input_tokens = input,
          .output_tokens = token_count(usage, "candidatesTokenCount"),
          .cached_input_tokens = cached,
          .reasoning_tokens = token_count(usage, "thoughtsTokenCount")};
}

std::expected<Reply, std::string> parse_gemini(std::string_view body) {
  auto doc = parse_body(body);
  if (!doc) return std::unexpected(doc.error());
  Reply reply;
  reply.usage = gemini_usage(object_member(*doc, "usageMetadata"));
  const rapidjson::Value* candidates = array_member(*doc, "candidates");
  if (!candidates || candidates->Empty()) return prompt_blocked(*doc, std::move(reply));
  const rapidjson::Value& candidate = (*candidates)[0];
  if (!candidate.IsObject()) return std::unexpected("no candidates[0]");
  reply.finish_reason = string_member(candidate, "finishReason").value_or("");
  // The text is the concatenation of the text parts; thought summaries are not the answer.
  // A blocked candidate has no content at all.
  std::optional<std::string> text;
  const rapidjson::Value* content = object_member(candidate, "content");
  if (const rapidjson::Value* parts = content ? array_member(*content, "parts") : nullptr) {
    for (const auto& part : parts->GetArray()) {
      if (json::bool_member(part, "thought").value_or(false)) continue;
      if (auto piece = string_member(part, "text")) text = text.value_or("") + *piece;
    }
  }
  reply.output = text.value_or("");
  const std::string finish = " (finishReason " + reply.finish_reason;
  if (reply.finish_reason == "MAX_TOKENS") {
    reply.ending = Ending::truncated;
  } else if (is_block(reply.finish_reason)) {
    reply.ending = Ending::blocked;
    reply.why = "the provider blocked the reply" + finish + flagged_ratings(candidate) + ")" +
                provider_message(candidate, "finishMessage");
  } else if (!text) {
    reply.ending = Ending::no_text;
    reply.why = "the reply has no text" + finish + ")" + provider_message(candidate, "finishMessage");
  }
  return reply;
}

}  // namespace

const Dialect& gemini_dialect() {
  static const Dialect dialect{"gemini", &build_gemini, &parse_gemini};
  return dialect;
}

}  // namespace dispatchd::llm::detail
