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

// The events of an event stream, the last of which may lack its blank line: `body` is where
// the stream ended, and an unfinished last event still counts.
void read_events(SseReader& reader, std::string_view body, HttpOutcome& out) {
  auto events = reader.feed(body);
  if (events) {
    auto end = reader.feed("\n\n");
    if (end) events->insert(events->end(), end->begin(), end->end());
  }
  if (!events) {
    out.kind = HttpOutcomeKind::refused;
    out.why = "the event stream is refused: " + events.error();
    return;
  }
  out.kind = HttpOutcomeKind::messages;
  out.event_stream = true;
  for (auto& event : *events)
    if (event.type == "message" && !event.data.empty()) out.messages.push_back(std::move(event.data));
  out.retry = reader.retry();
  out.last_event_id = reader.last_event_id();
}

bool is_event_stream(const net::HttpResponse& response) {
  return response.status >= 200 && response.status < 300 &&
         lower(response.headers.get("Content-Type").value_or("")).starts_with("text/event-stream");
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

net::HttpRequest resume_stream(const HttpEndpoint& endpoint, const HttpSessionState& state,
                               const std::string& last_event_id) {
  auto request = base_request(endpoint, state, "GET");
  request.headers.add("Accept", "text/event-stream");
  if (!state.protocol_version.empty()) request.headers.add("MCP-Protocol-Version", state.protocol_version);
  request.headers.add("Last-Event-ID", last_event_id);
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
      read_events(reader, response.body, out);
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

namespace dispatchd::mcp {

bool answers(std::string_view message, RequestId id) {
  const auto parsed = parse_message(message);
  return parsed && (parsed->kind == MessageKind::result || parsed->kind == MessageKind::error) && parsed->id == id;
}

std::vector<std::string> StreamedAnswer::feed(const net::HttpResponse& head, std::string_view chunk) {
  // Enough of a refusal's body to say why (status_line quotes its start) or to see that a
  // 400 names the session.
  constexpr std::size_t k_kept_bytes = 4096;
  if (m_body == Body::unknown) m_body = is_event_stream(head) ? Body::events : Body::other;
  std::vector<std::string> out;
  if (m_body == Body::other) {
    m_kept.append(chunk.substr(0, k_kept_bytes - std::min(k_kept_bytes, m_kept.size())));
    return out;
  }
  if (m_refusal) return out;
  auto events = m_reader.feed(chunk);
  if (!events) {
    m_refusal = "the event stream is refused: " + events.error();
    return out;
  }
  for (auto& event : *events)
    if (event.type == "message" && !event.data.empty()) out.push_back(std::move(event.data));
  return out;
}

HttpOutcome StreamedAnswer::finish(const net::HttpResult& result, bool had_session) {
  if (!result || m_body == Body::unknown) return read_http_answer(result, had_session);
  HttpOutcome out;
  if (m_refusal) {
    out.why = *m_refusal;
    return out;
  }
  if (m_body == Body::events) {
    read_events(m_reader, result->body, out);
    return out;
  }
  net::HttpResponse whole = *result;
  whole.body = m_kept + whole.body;
  return read_http_answer(whole, had_session);
}

std::expected<std::chrono::milliseconds, std::string> next_resume(StreamPosition& at, const HttpOutcome& ended,
                                                                  int max_resumes) {
  if (!ended.last_event_id.empty()) at.last_event_id = ended.last_event_id;
  if (ended.retry) at.retry = ended.retry;
  if (at.last_event_id.empty())
    return std::unexpected("the event stream ended before the answer, with no event id to resume from");
  if (at.resumes >= max_resumes)
    return std::unexpected("the event stream ended before the answer again after " + std::to_string(at.resumes) +
                           (at.resumes == 1 ? " resume" : " resumes") + "; not resumed again");
  ++at.resumes;
  return std::min(at.retry.value_or(k_default_resume_delay), k_max_resume_delay);
}

}  // namespace dispatchd::mcp
