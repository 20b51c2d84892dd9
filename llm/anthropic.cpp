// Anthropic messages: POST {base_url}/v1/messages with the output contract as one tool the
// model is forced to call (tool_choice {type: tool}). The tool_use block's `input` is the
// reply object; it is serialized back to JSON text so the validator checks it like any
// other provider's output.
#include "llm/dialect.h"

#include "common/strict_json.h"

namespace dispatchd::llm::detail {
namespace {

constexpr int k_default_max_tokens = 1024;  // the API requires max_tokens
constexpr const char* k_api_version = "2023-06-01";

void write_tool(Writer& w, const OutputSchema& schema) {
  w.Key("tools");
  w.StartArray();
  w.StartObject();
  w.Key("name");
  write_string(w, schema.name);
  w.Key("description");
  write_string(w, schema.description);
  w.Key("input_schema");
  write_raw(w, schema.json_schema);
  w.EndObject();
  w.EndArray();
  w.Key("tool_choice");
  w.StartObject();
  w.Key("type");
  w.String("tool");
  w.Key("name");
  write_string(w, schema.name);
  w.EndObject();
}

net::HttpRequest build(const ProviderConfig& config, const CompletionRequest& request) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("model");
  write_string(w, config.model);
  w.Key("max_tokens");
  w.Int(config.max_output_tokens.value_or(k_default_max_tokens));
  if (!request.system.empty()) {
    w.Key("system");
    write_string(w, request.system);
  }
  w.Key("messages");
  w.StartArray();
  write_chat_turns(w, request.turns);
  w.EndArray();
  write_tool(w, *request.schema);
  write_optional_double(w, "temperature", config.temperature);
  w.EndObject();
  net::HttpRequest http = json_post(config, "/v1/messages", {buffer.GetString(), buffer.GetSize()});
  if (!config.api_key.empty()) http.headers.add("x-api-key", config.api_key);
  http.headers.add("anthropic-version", k_api_version);
  return http;
}

// The first tool_use block's input as JSON text; else the text blocks joined (a model that
// ignored the forced tool: the validator will say what is wrong with its text).
std::string output_of(const rapidjson::Value& content) {
  std::string text;
  for (const auto& block : content.GetArray()) {
    const auto type = string_member(block, "type");
    if (type == "tool_use") {
      if (const rapidjson::Value* input = member(block, "input")) return json::to_string(*input);
    } else if (type == "text") {
      text += string_member(block, "text").value_or("");
    }
  }
  return text;
}

std::expected<Reply, std::string> parse(std::string_view body) {
  auto doc = parse_body(body);
  if (!doc) return std::unexpected(doc.error());
  const rapidjson::Value* content = array_member(*doc, "content");
  if (!content) return std::unexpected("no content array");
  Reply reply;
  reply.finish_reason = string_member(*doc, "stop_reason").value_or("");
  reply.truncated = reply.finish_reason == "max_tokens";
  reply.output = output_of(*content);
  const rapidjson::Value* usage = object_member(*doc, "usage");
  reply.usage = {count_member(usage, "input_tokens"), count_member(usage, "output_tokens")};
  return reply;
}

}  // namespace

const Dialect& anthropic_dialect() {
  static const Dialect dialect{"anthropic", &build, &parse};
  return dialect;
}

}  // namespace dispatchd::llm::detail
