#include "mcp/protocol.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/json_access.h"
#include "common/json_out.h"
#include "common/strict_json.h"

namespace dispatchd::mcp {
namespace {

using json::array_member;
using json::member;
using json::object_member;
using json::string_member;
using rapidjson::Value;

constexpr std::size_t k_max_error_message_bytes = 500;
constexpr std::size_t k_max_tools_per_page = 1000;
constexpr std::size_t k_max_part_name_bytes = 200;
// What a result body may hold apart from the texts the caller caps: the JSON around them.
constexpr std::size_t k_max_result_bytes = 16u << 20;

// `text` cut to at most `max` bytes, at a character boundary (REQUIRES: valid UTF-8).
std::string_view utf8_cut(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

// The shell of a request or notification: {"jsonrpc":"2.0"[,"id":N],"method":M, ...
JsonOut& begin_message(JsonOut& out, std::optional<RequestId> id, std::string_view method) {
  out.begin_object().field("jsonrpc", "2.0");
  if (id) out.field("id", *id);
  return out.field("method", method);
}

std::expected<json::Parsed, std::string> parse_result(std::string_view result_json) {
  if (result_json.size() > k_max_result_bytes) return std::unexpected("the result is too large");
  auto parsed = json::parse_strict(result_json, json::ParseLimits{.max_depth = 64});
  if (!parsed) return std::unexpected("the result is not JSON: " + parsed.error().message);
  if (!parsed->document.IsObject()) return std::unexpected(std::string("the result is not an object"));
  return std::move(*parsed);
}

}  // namespace

std::optional<std::string_view> negotiate(std::string_view answered) {
  const auto it = std::find(k_protocol_versions.begin(), k_protocol_versions.end(), answered);
  if (it == k_protocol_versions.end()) return std::nullopt;
  return *it;
}

std::string initialize_request(RequestId id, const ClientInfo& client) {
  JsonOut out;
  begin_message(out, id, "initialize")
      .begin_object("params")
      .field("protocolVersion", latest_protocol_version())
      .begin_object("capabilities")
      .end_object()
      .begin_object("clientInfo")
      .field("name", client.name)
      .field("version", client.version)
      .end_object()
      .end_object()
      .end_object();
  return out.str();
}

std::string initialized_notification() {
  JsonOut out;
  begin_message(out, std::nullopt, "notifications/initialized").end_object();
  return out.str();
}

std::string tools_list_request(RequestId id, const std::optional<std::string>& cursor) {
  JsonOut out;
  begin_message(out, id, "tools/list");
  if (cursor) out.begin_object("params").field("cursor", *cursor).end_object();
  out.end_object();
  return out.str();
}

std::string tools_call_request(RequestId id, std::string_view tool, std::string_view arguments_json,
                               std::string_view idempotency_key) {
  JsonOut out;
  begin_message(out, id, "tools/call").begin_object("params").field("name", tool).raw("arguments", arguments_json);
  if (!idempotency_key.empty())
    out.begin_object("_meta").field("dispatchd/idempotency_key", idempotency_key).end_object();
  out.end_object().end_object();
  return out.str();
}

std::string cancelled_notification(RequestId id, std::string_view reason) {
  JsonOut out;
  begin_message(out, std::nullopt, "notifications/cancelled")
      .begin_object("params")
      .field("requestId", id)
      .field("reason", reason)
      .end_object()
      .end_object();
  return out.str();
}

std::string empty_result(std::string_view raw_id) {
  JsonOut out;
  out.begin_object().field("jsonrpc", "2.0").raw("id", raw_id).begin_object("result").end_object().end_object();
  return out.str();
}

std::string method_not_found(std::string_view raw_id, std::string_view method) {
  JsonOut out;
  out.begin_object()
      .field("jsonrpc", "2.0")
      .raw("id", raw_id)
      .begin_object("error")
      .field("code", k_method_not_found)
      .field("message", "method not found: " + std::string(utf8_cut(method, 100)))
      .end_object()
      .end_object();
  return out.str();
}

std::expected<Message, std::string> parse_message(std::string_view text, const MessageLimits& limits) {
  if (text.size() > limits.max_bytes)
    return std::unexpected("a message of " + std::to_string(text.size()) + " bytes (at most " +
                           std::to_string(limits.max_bytes) + ")");
  auto parsed = json::parse_strict(text, json::ParseLimits{.max_depth = limits.max_depth});
  if (!parsed) return std::unexpected("not JSON: " + parsed.error().message);
  const Value& doc = parsed->document;
  if (doc.IsArray()) return std::unexpected(std::string("a JSON-RPC batch (the protocol sends none)"));
  if (!doc.IsObject()) return std::unexpected(std::string("not a JSON object"));
  if (string_member(doc, "jsonrpc") != "2.0") return std::unexpected(std::string("not JSON-RPC 2.0"));

  const Value* id = member(doc, "id");
  const Value* method = member(doc, "method");
  const Value* params = member(doc, "params");
  Message out;
  if (method) {
    if (!method->IsString() || method->GetStringLength() == 0)
      return std::unexpected(std::string("a method that is not a string"));
    out.method = json::string_of(method);
    if (params) out.params = json::to_string(*params);
    if (!id) {
      out.kind = MessageKind::notification;
      return out;
    }
    if (!id->IsString() && !(id->IsInt64() || id->IsUint64()))
      return std::unexpected(std::string("a request whose id is neither a string nor an integer"));
    out.kind = MessageKind::request;
    out.raw_id = json::to_string(*id);
    return out;
  }
  if (!id) return std::unexpected(std::string("neither a request, a notification nor an answer"));
  if (id->IsInt64()) out.id = id->GetInt64();
  const Value* result = member(doc, "result");
  const Value* error = member(doc, "error");
  if ((result != nullptr) == (error != nullptr))
    return std::unexpected(std::string("an answer with both or neither of result and error"));
  if (result) {
    out.kind = MessageKind::result;
    out.result = json::to_string(*result);
    return out;
  }
  if (!error->IsObject()) return std::unexpected(std::string("an error that is not an object"));
  out.kind = MessageKind::error;
  out.error_code = json::int_member(*error, "code").value_or(0);
  out.error_message = std::string(utf8_cut(json::string_of(member(*error, "message")), k_max_error_message_bytes));
  return out;
}

std::expected<ServerHello, std::string> read_initialize_result(std::string_view result_json) {
  auto parsed = parse_result(result_json);
  if (!parsed) return std::unexpected(parsed.error());
  const Value& doc = parsed->document;
  ServerHello out;
  const auto version = string_member(doc, "protocolVersion");
  if (!version || version->empty()) return std::unexpected(std::string("the answer names no protocolVersion"));
  out.protocol_version = std::string(utf8_cut(*version, 64));
  const Value* info = object_member(doc, "serverInfo");
  out.name = std::string(utf8_cut(string_member(info, "name").value_or(""), 200));
  out.version = std::string(utf8_cut(string_member(info, "version").value_or(""), 200));
  const Value* tools = object_member(object_member(doc, "capabilities"), "tools");
  out.tools = tools != nullptr;
  out.tools_list_changed = json::bool_member(tools, "listChanged").value_or(false);
  return out;
}

std::expected<ToolPage, std::string> read_tools_list(std::string_view result_json) {
  auto parsed = parse_result(result_json);
  if (!parsed) return std::unexpected(parsed.error());
  const Value& doc = parsed->document;
  const Value* tools = array_member(doc, "tools");
  if (!tools) return std::unexpected(std::string("the answer has no tools array"));
  if (tools->Size() > k_max_tools_per_page)
    return std::unexpected("a page of " + std::to_string(tools->Size()) + " tools (at most " +
                           std::to_string(k_max_tools_per_page) + ")");
  ToolPage out;
  std::set<std::string> names;
  for (rapidjson::SizeType i = 0; i < tools->Size(); ++i) {
    const Value& tool = (*tools)[i];
    const std::string at = "tools[" + std::to_string(i) + "]";
    const auto name = string_member(tool, "name");
    if (!name || name->empty()) return std::unexpected(at + " has no name");
    const Value* schema = object_member(tool, "inputSchema");
    if (!schema) return std::unexpected(at + " (" + *name + ") has no inputSchema object");
    if (!names.insert(*name).second) return std::unexpected("two tools named " + *name);
    out.tools.push_back(Tool{*name, string_member(tool, "description").value_or(""), json::to_string(*schema)});
  }
  if (auto cursor = string_member(doc, "nextCursor"); cursor && !cursor->empty()) out.next_cursor = std::move(*cursor);
  return out;
}

std::expected<ToolResult, std::string> read_tool_result(std::string_view result_json, std::size_t max_text_bytes) {
  auto parsed = parse_result(result_json);
  if (!parsed) return std::unexpected(parsed.error());
  const Value& doc = parsed->document;
  const Value* content = array_member(doc, "content");
  if (!content) return std::unexpected(std::string("the answer has no content array"));
  ToolResult out;
  out.is_error = json::bool_member(doc, "isError").value_or(false);
  for (const Value& part : content->GetArray()) {
    const std::string type = string_member(part, "type").value_or("");
    if (type == "text") {
      const std::string_view text = json::string_of(member(part, "text"));
      const std::size_t separator = out.text.empty() ? 0 : 1;
      if (out.truncated) continue;
      if (out.text.size() + separator + text.size() > max_text_bytes) {
        out.truncated = true;
        if (out.text.size() + separator >= max_text_bytes) continue;
        if (separator) out.text += '\n';
        out.text += utf8_cut(text, max_text_bytes - out.text.size());
        continue;
      }
      if (separator) out.text += '\n';
      out.text += text;
      continue;
    }
    // Named, never passed: the model reads text, and a resource's contents are the server's.
    std::string detail = string_member(part, "mimeType").value_or("");
    if (type == "resource_link") detail = string_member(part, "uri").value_or(detail);
    if (type == "resource") detail = string_member(object_member(part, "resource"), "uri").value_or(detail);
    std::string name = type.empty() ? std::string("unknown") : type;
    if (!detail.empty()) name += " (" + detail + ")";
    out.other_parts.push_back(std::string(utf8_cut(name, k_max_part_name_bytes)));
  }
  if (const Value* structured = member(doc, "structuredContent"); structured && structured->IsObject()) {
    std::string text = json::to_string(*structured);
    if (text.size() <= max_text_bytes) out.structured = std::move(text);
  }
  return out;
}

}  // namespace dispatchd::mcp
