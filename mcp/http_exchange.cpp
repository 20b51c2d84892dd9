#include "mcp/http_exchange.h"

#include <algorithm>
#include <cctype>

#include "common/text.h"
#include "mcp/sse.h"

namespace dispatchd::mcp {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// "HTTP 500: <the start of the body>", the body quoted short: servers put their reason there.
std::string status_line(const net::HttpResponse& response) {
  std::string out = "HTTP " + std::to_string(response.status);
  if (!response.body.empty()) out += ": " + text::quote(response.body, 120);
  return out;
}

net::HttpRequest base_request(const HttpEndpoint& endpoint, const HttpSessionState& state, std::string method) {
  net::HttpRequest request;
  request.method = std::move(method);
  request.url = endpoint.url;
  request.timeout = endpoint.timeout;
  if (!endpoint.token.empty()) request.headers.add("Authorization", "Bearer " + endpoint.token);
  if (!state.session_id.empty()) request.headers.add("Mcp-Session-Id", state.session_id);
  return request;
}

}  // namespace

net::HttpRequest post_message(const HttpEndpoint& endpoint, const HttpSessionState& state, std::string message,
                              bool initialize) {
  auto request = base_request(endpoint, state, "POST");
  request.headers.add("Content-Type", "application/json");
  request.headers.add("Accept", "application/json, text/event-stream");
  if (!initialize && !state.protocol_version.empty())
    request.headers.add("MCP-Protocol-Version", state.protocol_version);
  request.body = std::move(message);
  return request;
}

net::HttpRequest delete_session(const HttpEndpoint& endpoint, const HttpSessionState& state) {
  auto request = base_request(endpoint, state, "DELETE");
  if (!state.protocol_version.empty()) request.headers.add("MCP-Protocol-Version", state.protocol_version);
  return request;
}

HttpOutcome read_http_answer(const net::HttpResult& result, bool had_session) {
  HttpOutcome out;
  if (!result) {
    out.kind = HttpOutcomeKind::unavailable;
    out.why = "no answer: " + result.error().message;
    return out;
  }
  const net::HttpResponse& response = *result;
  if (const auto id = response.headers.get("Mcp-Session-Id"); id && !id->empty()) out.session_id = std::string(*id);
  const int status = response.status;
  if (status == 202 || (status >= 200 && status < 300 && response.body.empty())) {
    out.kind = HttpOutcomeKind::accepted;
    return out;
  }
  if (status >= 200 && status < 300) {
    const std::string type = lower(response.headers.get("Content-Type").value_or(""));
    if (type.starts_with("application/json")) {
      out.kind = HttpOutcomeKind::messages;
      out.messages.push_back(response.body);
      return out;
    }
    if (type.starts_with("text/event-stream")) {
      SseReader reader;
      auto events = reader.feed(response.body);
      // The body is the whole stream: a last event without its blank line still counts.
      if (events) {
        auto end = reader.feed("\n\n");
        if (end) events->insert(events->end(), end->begin(), end->end());
      }
      if (!events) {
        out.why = "the event stream is refused: " + events.error();
        return out;
      }
      out.kind = HttpOutcomeKind::messages;
      for (auto& event : *events)
        if (event.type == "message" && !event.data.empty()) out.messages.push_back(std::move(event.data));
      out.retry = reader.retry();
      out.last_event_id = reader.last_event_id();
      return out;
    }
    out.why = "an answer of type " + text::quote(type.empty() ? "(none)" : type) + ", neither JSON nor an event stream";
    return out;
  }
  out.why = status_line(response);
  if (had_session && (status == 404 || (status == 400 && lower(response.body).find("session") != std::string::npos)))
    out.kind = HttpOutcomeKind::session_expired;
  else if (status == 401 || status == 403)
    out.kind = HttpOutcomeKind::unauthorized;
  else if (status == 408 || status == 429 || status >= 500)
    out.kind = HttpOutcomeKind::unavailable;
  else
    out.kind = HttpOutcomeKind::refused;
  return out;
}

}  // namespace dispatchd::mcp
