#include "mcp/session.h"

#include <utility>

namespace dispatchd::mcp {
namespace {

std::string rpc_error_text(const Message& message) {
  return "error " + std::to_string(message.error_code) +
         (message.error_message.empty() ? std::string() : ": " + message.error_message);
}

std::string spoken_revisions() {
  std::string out;
  for (const auto version : k_protocol_versions) out += (out.empty() ? "" : ", ") + std::string(version);
  return out;
}

}  // namespace

std::string_view to_string(CallErrorKind kind) {
  switch (kind) {
    case CallErrorKind::unavailable: return "unavailable";
    case CallErrorKind::timed_out: return "timed_out";
    case CallErrorKind::rejected: return "rejected";
    case CallErrorKind::bad_answer: return "bad_answer";
    case CallErrorKind::not_sent: return "not_sent";
    case CallErrorKind::disabled: return "disabled";
  }
  return "unavailable";
}

Session::Session(SessionSettings settings) : m_settings(std::move(settings)) {}

Step Session::start(Clock::time_point now) {
  Step step;
  m_state = State::initializing;
  const RequestId id = m_pending.add("initialize", now + m_settings.startup_timeout);
  step.send.push_back(initialize_request(id, m_settings.client));
  return step;
}

Step Session::on_message(std::string_view text, Clock::time_point now) {
  Step step;
  if (m_state == State::idle || m_state == State::failed || m_state == State::closed) return step;
  auto message = parse_message(text, m_settings.message_limits);
  if (!message) {
    ++m_stats.skipped_messages;
    return step;
  }
  switch (message->kind) {
    case MessageKind::request:
      ++m_stats.server_requests;
      step.send.push_back(message->method == "ping" ? empty_result(message->raw_id)
                                                    : method_not_found(message->raw_id, message->method));
      break;
    case MessageKind::notification:
      if (message->method == "notifications/tools/list_changed") {
        ++m_stats.list_changes;
        if (m_listing_active)
          m_relist = true;  // the listing in progress may predate the change: list again after it
        else if (m_state == State::ready)
          start_listing(step, now);
      }
      break;
    case MessageKind::result:
    case MessageKind::error:
      if (!message->id) {
        ++m_stats.skipped_messages;
        break;
      }
      on_answer(step, *message, now);
      break;
  }
  return step;
}

void Session::on_answer(Step& step, const Message& message, Clock::time_point now) {
  auto answer = m_pending.answer(*message.id);
  if (answer.kind == Pending::AnswerKind::late) {
    ++m_stats.late_answers;
    return;
  }
  if (answer.kind == Pending::AnswerKind::unknown) {
    ++m_stats.skipped_messages;
    return;
  }
  const std::string& method = answer.request->method;
  if (method == "initialize") return on_initialize_answer(step, message, now);
  if (method == "tools/list") return on_page(step, message, now);
  const auto call = m_calls.find(*message.id);
  if (call == m_calls.end()) return;
  const CallTag tag = call->second;
  m_calls.erase(call);
  if (message.kind == MessageKind::error) {
    step.events.push_back(CallDone{tag, std::unexpected(CallError{CallErrorKind::rejected, rpc_error_text(message)})});
    return;
  }
  auto result = read_tool_result(message.result, m_settings.max_result_bytes);
  if (!result) {
    step.events.push_back(CallDone{tag, std::unexpected(CallError{CallErrorKind::bad_answer, result.error()})});
    return;
  }
  step.events.push_back(CallDone{tag, std::move(*result)});
}

void Session::on_initialize_answer(Step& step, const Message& message, Clock::time_point now) {
  if (message.kind == MessageKind::error) return fail(step, "initialize was refused: " + rpc_error_text(message));
  auto hello = read_initialize_result(message.result);
  if (!hello) return fail(step, "the initialize answer is unreadable: " + hello.error());
  const auto version = negotiate(hello->protocol_version);
  if (!version)
    return fail(step, "the server speaks protocol revision " + hello->protocol_version + "; dispatchd speaks " +
                          spoken_revisions());
  m_hello = std::move(*hello);
  m_version = *version;
  step.send.push_back(initialized_notification());
  if (!m_hello.tools) {
    // A server without tools has no tools/list to answer: its list is empty.
    m_state = State::ready;
    step.events.push_back(ToolsListed{m_hello, m_version, {}});
    return;
  }
  start_listing(step, now);
}

void Session::start_listing(Step& step, Clock::time_point now) {
  m_listing_active = true;
  m_relist = false;
  m_listing.clear();
  m_cursors.clear();
  m_cursor.reset();
  m_pages = 0;
  request_page(step, now);
}

void Session::request_page(Step& step, Clock::time_point now) {
  const RequestId id = m_pending.add("tools/list", now + m_settings.startup_timeout);
  step.send.push_back(tools_list_request(id, m_cursor));
}

void Session::on_page(Step& step, const Message& message, Clock::time_point now) {
  if (message.kind == MessageKind::error) return fail(step, "tools/list was refused: " + rpc_error_text(message));
  auto page = read_tools_list(message.result);
  if (!page) return fail(step, "a tools/list answer is unreadable: " + page.error());
  for (auto& tool : page->tools) {
    for (const auto& seen : m_listing)
      if (seen.name == tool.name) return fail(step, "tools/list names the tool " + tool.name + " twice");
    m_listing.push_back(std::move(tool));
  }
  ++m_pages;
  if (page->next_cursor) {
    if (m_pages >= m_settings.max_pages)
      return fail(step, "tools/list goes on past " + std::to_string(m_settings.max_pages) + " pages");
    if (!m_cursors.insert(*page->next_cursor).second)
      return fail(step, "tools/list repeats a cursor: its pages would never end");
    m_cursor = std::move(page->next_cursor);
    return request_page(step, now);
  }
  m_listing_active = false;
  m_state = State::ready;
  step.events.push_back(ToolsListed{m_hello, m_version, std::move(m_listing)});
  m_listing.clear();
  if (m_relist) start_listing(step, now);
}

Step Session::on_tick(Clock::time_point now) {
  Step step;
  auto expired = m_pending.expire(now);
  // The protocol forbids cancelling initialize; anything else is told it was given up.
  for (const auto& request : expired)
    if (request.method != "initialize") step.send.push_back(cancelled_notification(request.id, "timed out"));
  // Calls first, so that each ends as timed out even when a listing's deadline fails the
  // session in the same tick.
  for (const auto& request : expired) {
    const auto call = m_calls.find(request.id);
    if (call == m_calls.end()) continue;
    const auto timeout = std::to_string(m_settings.call_timeout.count());
    step.events.push_back(CallDone{
        call->second, std::unexpected(CallError{CallErrorKind::timed_out, "no answer within " + timeout + " ms"})});
    m_calls.erase(call);
  }
  for (const auto& request : expired) {
    if (request.method == "tools/call" || m_state == State::failed) continue;
    fail(step, request.method + " unanswered within " + std::to_string(m_settings.startup_timeout.count()) + " ms");
  }
  return step;
}

Step Session::call(CallTag tag, std::string_view tool, std::string_view arguments_json,
                   std::string_view idempotency_key, Clock::time_point now) {
  Step step;
  if (m_state != State::ready) {
    step.events.push_back(
        CallDone{tag, std::unexpected(CallError{CallErrorKind::not_sent, "the MCP session is not ready"})});
    return step;
  }
  const RequestId id = m_pending.add("tools/call", now + m_settings.call_timeout);
  m_calls.emplace(id, tag);
  step.send.push_back(tools_call_request(id, tool, arguments_json, idempotency_key));
  return step;
}

Step Session::undeliverable(RequestId id, const CallError& error) {
  Step step;
  auto answer = m_pending.answer(id);
  if (answer.kind != Pending::AnswerKind::expected) return step;
  if (const auto call = m_calls.find(id); call != m_calls.end()) {
    step.events.push_back(CallDone{call->second, std::unexpected(error)});
    m_calls.erase(call);
    return step;
  }
  fail(step, answer.request->method + " could not be delivered: " + error.message);
  return step;
}

Step Session::close(std::string_view why) {
  Step step;
  end_calls(step, std::string(why));
  m_state = State::closed;
  return step;
}

void Session::fail(Step& step, std::string why) {
  end_calls(step, why);
  m_state = State::failed;
  step.events.push_back(SessionFailed{std::move(why)});
}

void Session::end_calls(Step& step, const std::string& why) {
  // Nothing more goes out on this connection: every request still waiting is dropped (an
  // answer that comes anyway is ignored), and each call among them ends unavailable.
  for (const auto& request : m_pending.drain()) {
    const auto call = m_calls.find(request.id);
    if (call != m_calls.end())
      step.events.push_back(CallDone{call->second, std::unexpected(CallError{CallErrorKind::unavailable, why})});
  }
  m_calls.clear();
  m_listing_active = false;
}

}  // namespace dispatchd::mcp
