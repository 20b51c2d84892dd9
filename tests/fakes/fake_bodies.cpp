// Response bodies shaped as each provider documents them: OpenAI chat.completion,
// Gemini GenerateContentResponse, Anthropic Message, and each one's error object.
#include "tests/fakes/fake_bodies.h"

#include "common/json_access.h"
#include "common/json_out.h"
#include "common/strict_json.h"

namespace dispatchd::fakes {
namespace {

// The request dispatchd sent, parsed as the providers would (it is always one JSON object).
std::optional<json::Parsed> parse_request(const ReceivedRequest& request) {
  auto parsed = json::parse_strict(request.body, {.max_depth = 64});
  if (!parsed || !parsed->document.IsObject()) return std::nullopt;
  return std::move(*parsed);
}

// A string member of the request's top-level JSON object, or `fallback`.
std::string request_member(const ReceivedRequest& request, const char* name, const char* fallback) {
  const auto parsed = parse_request(request);
  return (parsed ? json::string_member(parsed->document, name) : std::nullopt).value_or(fallback);
}

// The model named in a Gemini path: /v1beta/models/{model}:generateContent.
std::string gemini_model(const std::string& target) {
  const std::string_view prefix = "/v1beta/models/";
  const auto colon = target.find(':', prefix.size());
  return colon == std::string::npos ? "fake" : target.substr(prefix.size(), colon - prefix.size());
}

bool is_json_object(const std::string& text) {
  const auto parsed = json::parse_strict(text, {.max_depth = 64});
  return parsed && parsed->document.IsObject();
}

void openai_ok(JsonOut& w, const FakeReply& r, const ReceivedRequest& request, std::size_t serial) {
  w.begin_object().field("id", "chatcmpl-fake-" + std::to_string(serial)).field("object", "chat.completion");
  w.field("created", 1700000000).field("model", request_member(request, "model", "fake"));
  w.begin_array("choices").begin_object().field("index", 0);
  w.begin_object("message").field("role", "assistant").field("content", r.output).field("refusal", nullptr);
  w.end_object().field("finish_reason", r.truncated ? "length" : "stop").end_object().end_array();
  const int prompt = r.input_tokens + r.cached_input_tokens;
  const int completion = r.output_tokens + r.reasoning_tokens;
  w.begin_object("usage").field("prompt_tokens", prompt).field("completion_tokens", completion);
  w.field("total_tokens", prompt + completion);
  w.begin_object("prompt_tokens_details").field("cached_tokens", r.cached_input_tokens).end_object();
  w.begin_object("completion_tokens_details").field("reasoning_tokens", r.reasoning_tokens).end_object();
  w.end_object();
  w.end_object();
}

void gemini_ok(JsonOut& w, const FakeReply& r, const ReceivedRequest& request) {
  w.begin_object().begin_array("candidates").begin_object().begin_object("content");
  w.begin_array("parts").begin_object().field("text", r.output).end_object().end_array();
  w.field("role", "model").end_object();
  w.field("finishReason", r.truncated ? "MAX_TOKENS" : "STOP").field("index", 0).end_object().end_array();
  const int prompt = r.input_tokens + r.cached_input_tokens;
  w.begin_object("usageMetadata").field("promptTokenCount", prompt).field("candidatesTokenCount", r.output_tokens);
  w.field("totalTokenCount", prompt + r.output_tokens + r.reasoning_tokens);
  if (r.cached_input_tokens) w.field("cachedContentTokenCount", r.cached_input_tokens);
  if (r.reasoning_tokens) w.field("thoughtsTokenCount", r.reasoning_tokens);
  w.end_object().field("modelVersion", gemini_model(request.target)).end_object();
}

// The forced tool's name, read back from the request's tool_choice.
std::string anthropic_tool(const ReceivedRequest& request) {
  const auto parsed = parse_request(request);
  if (!parsed) return "dispatchd_action";
  return json::string_member(json::object_member(parsed->document, "tool_choice"), "name").value_or("dispatchd_action");
}

void anthropic_ok(JsonOut& w, const FakeReply& r, const ReceivedRequest& request, std::size_t serial) {
  const bool tool = !r.truncated && is_json_object(r.output);
  w.begin_object().field("id", "msg_fake_" + std::to_string(serial)).field("type", "message");
  w.field("role", "assistant").field("model", request_member(request, "model", "fake"));
  w.begin_array("content").begin_object();
  if (tool) {
    w.field("type", "tool_use").field("id", "toolu_fake_" + std::to_string(serial));
    w.field("name", anthropic_tool(request)).raw("input", r.output);
  } else {
    w.field("type", "text").field("text", r.output);
  }
  w.end_object().end_array();
  w.field("stop_reason", r.truncated ? "max_tokens" : tool ? "tool_use" : "end_turn").field("stop_sequence", nullptr);
  w.begin_object("usage").field("input_tokens", r.input_tokens);
  w.field("cache_creation_input_tokens", r.cache_write_tokens).field("cache_read_input_tokens", r.cached_input_tokens);
  w.field("output_tokens", r.output_tokens + r.reasoning_tokens).end_object();
  w.end_object();
}

struct ErrorNames {
  const char* openai;
  const char* gemini;
  const char* anthropic;
};

ErrorNames error_names(int status) {
  switch (status) {
    case 400: return {"invalid_request_error", "INVALID_ARGUMENT", "invalid_request_error"};
    case 401: return {"invalid_request_error", "UNAUTHENTICATED", "authentication_error"};
    case 403: return {"invalid_request_error", "PERMISSION_DENIED", "permission_error"};
    case 404: return {"invalid_request_error", "NOT_FOUND", "not_found_error"};
    case 429: return {"rate_limit_exceeded", "RESOURCE_EXHAUSTED", "rate_limit_error"};
    case 503: return {"server_error", "UNAVAILABLE", "api_error"};
    case 529: return {"server_error", "UNAVAILABLE", "overloaded_error"};
    default: return {"server_error", "INTERNAL", "api_error"};
  }
}

void error_body(JsonOut& w, Dialect dialect, int status) {
  const ErrorNames names = error_names(status);
  w.begin_object();
  if (dialect == Dialect::anthropic) w.field("type", "error");
  w.begin_object("error");
  if (dialect == Dialect::gemini) w.field("code", status);
  w.field("message", "fake error " + std::to_string(status));
  if (dialect == Dialect::gemini)
    w.field("status", names.gemini);
  else
    w.field("type", dialect == Dialect::anthropic ? names.anthropic : names.openai);
  w.end_object().end_object();
}

}  // namespace

Dialect route(std::string_view path) {
  if (path.ends_with("/chat/completions")) return Dialect::openai;
  if (path.starts_with("/v1beta/models/") && path.ends_with(":generateContent")) return Dialect::gemini;
  if (path == "/v1/messages") return Dialect::anthropic;
  return Dialect::unknown;
}

std::string reply_body(Dialect dialect, const FakeReply& reply, const ReceivedRequest& request, std::size_t serial) {
  if (reply.raw_body) return *reply.raw_body;
  JsonOut w;
  if (reply.status != 200)
    error_body(w, dialect, reply.status);
  else if (dialect == Dialect::openai)
    openai_ok(w, reply, request, serial);
  else if (dialect == Dialect::gemini)
    gemini_ok(w, reply, request);
  else
    anthropic_ok(w, reply, request, serial);
  return w.str();
}

}  // namespace dispatchd::fakes
