// Anthropic messages: POST {base_url}/v1/messages with the output contract as one tool the
// model is forced to call (tool_choice {type: tool}). The tool_use block's `input` is the
// reply object; it is serialized back to JSON text so the validator checks it like any
// other provider's output. The system text is one block marked for Anthropic's prompt cache
// (cache_control ephemeral): with the tool before it, it is the part of every request for one
// catalog that does not change, read from the cache at a fraction of the input price.
#include "llm/internal/dialect.h"

#include "common/json_access.h"
#include "common/strict_json.h"

namespace dispatchd::llm::detail {
namespace {

using json::array_member;
using json::member;
using json::object_member;
using json::string_member;

constexpr int k_default_max_tokens = 1024;  // the API requires max_tokens
constexpr const char* k_api_version = "2023-06-01";

void write_tool(JsonOut& out, const OutputSchema& schema) {
  out.begin_array("tools").begin_object().field("name", schema.name).field("description", schema.description);
  out.raw("input_schema", schema.json_schema).end_object().end_array();
  out.begin_object("tool_choice").field("type", "tool").field("name", schema.name).end_object();
}

// A user turn with files: each file as an image or document block with its base64 source,
// before the text (Anthropic's vision and PDF guides put the files first), then the text.
void anthropic_content(JsonOut& out, const Turn& turn) {
  out.begin_array("content");
  for (const Attachment& file : turn.files) {
    out.begin_object().field("type", file.content_type.starts_with("image/") ? "image" : "document");
    out.begin_object("source").field("type", "base64").field("media_type", file.content_type);
    out.field("data", base64(*file.bytes)).end_object().end_object();
  }
  out.begin_object().field("type", "text").field("text", turn.text).end_object().end_array();
}

net::HttpRequest build_anthropic(const ProviderConfig& config, const CompletionRequest& request) {
  JsonOut out;
  out.begin_object().field("model", config.model);
  out.field("max_tokens", config.max_output_tokens.value_or(k_default_max_tokens));
  if (!request.system.empty()) {
    out.begin_array("system").begin_object().field("type", "text").field("text", request.system);
    out.begin_object("cache_control").field("type", "ephemeral").end_object().end_object().end_array();
  }
  out.begin_array("messages");
  write_chat_turns(out, request.turns, &anthropic_content);
  out.end_array();
  write_tool(out, *request.schema);
  out.field_if_set("temperature", config.temperature).end_object();
  net::HttpRequest http = json_post(config, "/v1/messages", out.str());
  if (!config.api_key.empty()) http.headers.add("x-api-key", config.api_key);
  http.headers.add("anthropic-version", k_api_version);
  return http;
}

// The first tool_use block's input as JSON text; else the text blocks joined (a model that
// ignored the forced tool: the validator will say what is wrong with its text); nullopt
// when the content has neither.
std::optional<std::string> output_of(const rapidjson::Value& content) {
  std::optional<std::string> text;
  for (const auto& block : content.GetArray()) {
    const auto type = string_member(block, "type");
    if (type == "tool_use") {
      if (const rapidjson::Value* input = member(block, "input")) return json::to_string(*input);
    } else if (type == "text") {
      text = text.value_or("") + string_member(block, "text").value_or("");
    }
  }
  return text;
}

// stop_reason refusal: a classifier stopped the model. stop_details may name a category and
// give an explanation (both may be null); the explanation, when there is one, is kept as
// the output instead of the text written so far.
void refused(const rapidjson::Value& doc, Reply& reply) {
  reply.ending = Ending::refused;
  reply.why = "the model refused (stop_reason refusal";
  const rapidjson::Value* details = object_member(doc, "stop_details");
  if (!details) {
    reply.why += ")";
    return;
  }
  if (auto category = string_member(*details, "category")) reply.why += "; category " + *category;
  reply.why += ")";
  if (auto explanation = string_member(*details, "explanation")) {
    reply.why += ": " + quoted(*explanation);
    reply.output = std::move(*explanation);
  }
}

std::expected<Reply, std::string> parse_anthropic(std::string_view body) {
  auto doc = parse_body(body);
  if (!doc) return std::unexpected(doc.error());
  const rapidjson::Value* content = array_member(*doc, "content");
  if (!content) return std::unexpected("no content array");
  Reply reply;
  reply.finish_reason = string_member(*doc, "stop_reason").value_or("");
  const rapidjson::Value* usage = object_member(*doc, "usage");
  // Cache reads and writes are reported beside input_tokens, not inside it; thinking is
  // inside output_tokens and not reported apart.
  reply.usage = {.input_tokens = token_count(usage, "input_tokens"),
                 .output_tokens = token_count(usage, "output_tokens"),
                 .cached_input_tokens = token_count(usage, "cache_read_input_tokens"),
                 .cache_write_tokens = token_count(usage, "cache_creation_input_tokens")};
  auto output = output_of(*content);
  reply.output = output.value_or("");
  if (reply.finish_reason == "max_tokens") {
    reply.ending = Ending::truncated;
  } else if (reply.finish_reason == "refusal") {
    refused(*doc, reply);
  } else if (!output) {
    reply.ending = Ending::no_text;
    reply.why = "the reply has neither the tool call nor text (stop_reason " + reply.finish_reason + ")";
  }
  return reply;
}

}  // namespace

const Dialect& anthropic_dialect() {
  static const Dialect dialect{"anthropic", &build_anthropic, &parse_anthropic};
  return dialect;
}

}  // namespace dispatchd::llm::detail
