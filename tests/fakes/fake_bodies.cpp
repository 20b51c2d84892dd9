// Response bodies shaped as each provider documents them: OpenAI chat.completion,
// Gemini GenerateContentResponse, Anthropic Message, and each one's error object.
#include "tests/fakes/fake_bodies.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace dispatchd::fakes {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void str(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

// A string member of the request's top-level JSON object, or `fallback`.
std::string request_member(const ReceivedRequest& request, const char* name, const char* fallback) {
  rapidjson::Document doc;
  doc.Parse(request.body.data(), request.body.size());
  if (doc.HasParseError() || !doc.IsObject()) return fallback;
  const auto it = doc.FindMember(name);
  return it != doc.MemberEnd() && it->value.IsString() ? it->value.GetString() : fallback;
}

// The model named in a Gemini path: /v1beta/models/{model}:generateContent.
std::string gemini_model(const std::string& target) {
  const std::string_view prefix = "/v1beta/models/";
  const auto colon = target.find(':', prefix.size());
  return colon == std::string::npos ? "fake" : target.substr(prefix.size(), colon - prefix.size());
}

bool is_json_object(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  return !doc.HasParseError() && doc.IsObject();
}

void openai_ok(Writer& w, const FakeReply& r, const ReceivedRequest& request, std::size_t serial) {
  w.StartObject();
  w.Key("id"), str(w, "chatcmpl-fake-" + std::to_string(serial));
  w.Key("object"), w.String("chat.completion");
  w.Key("created"), w.Int(1700000000);
  w.Key("model"), str(w, request_member(request, "model", "fake"));
  w.Key("choices"), w.StartArray(), w.StartObject();
  w.Key("index"), w.Int(0);
  w.Key("message"), w.StartObject();
  w.Key("role"), w.String("assistant");
  w.Key("content"), str(w, r.output);
  w.Key("refusal"), w.Null();
  w.EndObject();
  w.Key("finish_reason"), w.String(r.truncated ? "length" : "stop");
  w.EndObject(), w.EndArray();
  w.Key("usage"), w.StartObject();
  w.Key("prompt_tokens"), w.Int(r.input_tokens);
  w.Key("completion_tokens"), w.Int(r.output_tokens);
  w.Key("total_tokens"), w.Int(r.input_tokens + r.output_tokens);
  w.EndObject();
  w.EndObject();
}

void gemini_ok(Writer& w, const FakeReply& r, const ReceivedRequest& request) {
  w.StartObject();
  w.Key("candidates"), w.StartArray(), w.StartObject();
  w.Key("content"), w.StartObject();
  w.Key("parts"), w.StartArray(), w.StartObject(), w.Key("text"), str(w, r.output), w.EndObject(), w.EndArray();
  w.Key("role"), w.String("model");
  w.EndObject();
  w.Key("finishReason"), w.String(r.truncated ? "MAX_TOKENS" : "STOP");
  w.Key("index"), w.Int(0);
  w.EndObject(), w.EndArray();
  w.Key("usageMetadata"), w.StartObject();
  w.Key("promptTokenCount"), w.Int(r.input_tokens);
  w.Key("candidatesTokenCount"), w.Int(r.output_tokens);
  w.Key("totalTokenCount"), w.Int(r.input_tokens + r.output_tokens);
  w.EndObject();
  w.Key("modelVersion"), str(w, gemini_model(request.target));
  w.EndObject();
}

// The forced tool's name, read back from the request's tool_choice.
std::string anthropic_tool(const ReceivedRequest& request) {
  rapidjson::Document doc;
  doc.Parse(request.body.data(), request.body.size());
  if (doc.HasParseError() || !doc.IsObject()) return "dispatchd_action";
  const auto choice = doc.FindMember("tool_choice");
  if (choice == doc.MemberEnd() || !choice->value.IsObject()) return "dispatchd_action";
  const auto name = choice->value.FindMember("name");
  return name != choice->value.MemberEnd() && name->value.IsString() ? name->value.GetString() : "dispatchd_action";
}

void anthropic_ok(Writer& w, const FakeReply& r, const ReceivedRequest& request, std::size_t serial) {
  const bool tool = !r.truncated && is_json_object(r.output);
  w.StartObject();
  w.Key("id"), str(w, "msg_fake_" + std::to_string(serial));
  w.Key("type"), w.String("message");
  w.Key("role"), w.String("assistant");
  w.Key("model"), str(w, request_member(request, "model", "fake"));
  w.Key("content"), w.StartArray(), w.StartObject();
  if (tool) {
    w.Key("type"), w.String("tool_use");
    w.Key("id"), str(w, "toolu_fake_" + std::to_string(serial));
    w.Key("name"), str(w, anthropic_tool(request));
    w.Key("input"), w.RawValue(r.output.data(), r.output.size(), rapidjson::kObjectType);
  } else {
    w.Key("type"), w.String("text");
    w.Key("text"), str(w, r.output);
  }
  w.EndObject(), w.EndArray();
  w.Key("stop_reason"), w.String(r.truncated ? "max_tokens" : tool ? "tool_use" : "end_turn");
  w.Key("stop_sequence"), w.Null();
  w.Key("usage"), w.StartObject();
  w.Key("input_tokens"), w.Int(r.input_tokens);
  w.Key("output_tokens"), w.Int(r.output_tokens);
  w.EndObject();
  w.EndObject();
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

void error_body(Writer& w, Dialect dialect, int status) {
  const ErrorNames names = error_names(status);
  const std::string message = "fake error " + std::to_string(status);
  w.StartObject();
  if (dialect == Dialect::anthropic) w.Key("type"), w.String("error");
  w.Key("error"), w.StartObject();
  if (dialect == Dialect::gemini) w.Key("code"), w.Int(status);
  w.Key("message"), str(w, message);
  if (dialect == Dialect::gemini)
    w.Key("status"), w.String(names.gemini);
  else
    w.Key("type"), w.String(dialect == Dialect::anthropic ? names.anthropic : names.openai);
  w.EndObject();
  w.EndObject();
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
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  if (reply.status != 200)
    error_body(w, dialect, reply.status);
  else if (dialect == Dialect::openai)
    openai_ok(w, reply, request, serial);
  else if (dialect == Dialect::gemini)
    gemini_ok(w, reply, request);
  else
    anthropic_ok(w, reply, request, serial);
  return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace dispatchd::fakes
