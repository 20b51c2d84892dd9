#include "agent/tools.h"

#include "common/handler_timing.h"
#include "common/json_access.h"
#include "common/strict_json.h"
#include "common/text.h"
#include "common/utf8.h"
#include "validator/outbound.h"

namespace dispatchd::agent {

std::string percent_encode(std::string_view value) { return text::percent_encode(value); }

std::expected<std::string, std::string> tool_url(const catalog::Action& action, const std::string& output) {
  if (!action.http) return std::unexpected("action " + action.name + " is not an http tool");
  auto parsed = json::parse_strict(output, json::k_checked_json_limits);
  if (!parsed || !parsed->document.IsObject()) return std::unexpected("the tool call is not a JSON object");
  const rapidjson::Value& doc = parsed->document;
  const std::string& url = action.http->url;
  std::string out;
  std::size_t i = 0;
  while (i < url.size()) {
    const auto open = url.find('{', i);
    if (open == std::string::npos) {
      out.append(url, i);
      break;
    }
    const auto close = url.find('}', open);
    if (close == std::string::npos) return std::unexpected("unclosed placeholder in " + url);
    out.append(url, i, open - i);
    const std::string name = url.substr(open + 1, close - open - 1);
    const rapidjson::Value* value = json::member(doc, name);
    if (value == nullptr || value->IsNull()) return std::unexpected("no value for {" + name + "}");
    out += value->IsString() ? percent_encode(json::string_of(value)) : percent_encode(json::to_string(*value));
    i = close + 1;
  }
  return out;
}

std::expected<std::string, std::string> tool_arguments(const catalog::Catalog& catalog, const catalog::Action& action,
                                                       const std::string& output) {
  if (!action.mcp) return std::unexpected("action " + action.name + " is not an mcp tool");
  auto arguments = validator::tool_arguments(catalog, action, output);
  if (!arguments) return std::unexpected("the tool call is not a JSON object");
  return std::move(*arguments);
}

void note_answer(store::ToolCallRecord& record, const ToolAnswer& answer,
                 std::chrono::steady_clock::time_point started) {
  record.outcome = answer.outcome;
  record.result_bytes = static_cast<std::int64_t>(answer.result_bytes);
  record.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
}

ToolAnswer mcp_answer(const mcp::ServerCore::CallResult& result) {
  using store::ToolOutcome;
  if (!result) {
    const auto& error = result.error();
    switch (error.kind) {
      case mcp::CallErrorKind::not_sent:
      case mcp::CallErrorKind::unavailable:
        return {"the tool is unavailable right now (" + error.message + ")", ToolOutcome::unavailable, 0};
      case mcp::CallErrorKind::timed_out: return {"the tool did not answer in time", ToolOutcome::timed_out, 0};
      case mcp::CallErrorKind::rejected:
        return {"the tool refused the call: " + error.message, ToolOutcome::rejected, 0};
      case mcp::CallErrorKind::bad_answer: return {"the tool's answer could not be read", ToolOutcome::bad_answer, 0};
      case mcp::CallErrorKind::disabled:
        return {"the tool is unavailable: its server's schema no longer matches the catalog, or it is not listed",
                ToolOutcome::disabled, 0};
    }
    return {"the tool is unavailable", ToolOutcome::unavailable, 0};
  }
  std::string text = result->text;
  if (result->truncated) text += "\n[answer cut at the size limit]";
  for (const auto& part : result->other_parts) text += "\n[" + part + " not shown]";
  const std::size_t bytes = result->text.size();
  if (result->is_error) return {"the tool reported an error: " + text, ToolOutcome::tool_error, bytes};
  return {std::move(text), ToolOutcome::ok, bytes};
}

void run_tool(net::Transport& transport, const std::string& url, const ToolLimits& limits,
              std::move_only_function<void(ToolAnswer)> done) {
  net::HttpRequest request;
  request.method = "GET";
  request.url = url;
  request.timeout = limits.timeout;
  request.connect_timeout = std::min(limits.timeout, std::chrono::milliseconds(5000));
  request.headers.add("Accept", "application/json, text/plain");
  transport.send(std::move(request),
                 common::named_step([max = limits.max_bytes, done = std::move(done)](net::HttpResult result) mutable {
                   if (!result) {
                     const bool late = result.error().kind == net::TransportErrorKind::timed_out;
                     done({"the tool could not be reached (" + std::string(net::to_string(result.error().kind)) + ")",
                           late ? store::ToolOutcome::timed_out : store::ToolOutcome::unavailable, 0});
                     return;
                   }
                   const std::size_t received = result->body.size();
                   const auto outcome = result->status >= 400 ? store::ToolOutcome::tool_error : store::ToolOutcome::ok;
                   std::string body = std::move(result->body);
                   bool cut = false;
                   if (body.size() > max) {
                     // Cut on a UTF-8 boundary so the model gets valid text.
                     std::size_t end = max;
                     while (end > 0 && (static_cast<unsigned char>(body[end]) & 0xC0) == 0x80) --end;
                     body.resize(end);
                     cut = true;
                   }
                   if (!utf8::is_valid(body)) {
                     for (char& c : body) {
                       if (static_cast<unsigned char>(c) >= 0x80) c = '?';
                     }
                   }
                   std::string text = "HTTP " + std::to_string(result->status) + "\n" + body;
                   if (cut) text += "\n[answer cut at " + std::to_string(max) + " bytes]";
                   done({std::move(text), outcome, received});
                 }));
}

}  // namespace dispatchd::agent
