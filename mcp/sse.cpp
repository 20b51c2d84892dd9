#include "mcp/sse.h"

#include <algorithm>

namespace dispatchd::mcp {

std::expected<std::vector<SseEvent>, std::string> SseReader::feed(std::string_view chunk) {
  std::vector<SseEvent> out;
  if (!m_started && !chunk.empty()) {
    // The UTF-8 BOM, only as the stream's first bytes (a chunk may end inside it; streams
    // begin with far more than three bytes in practice, so a split BOM is not looked for).
    if (chunk.starts_with("\xEF\xBB\xBF")) chunk.remove_prefix(3);
    m_started = true;
  }
  for (const char c : chunk) {
    if (m_after_cr) {
      m_after_cr = false;
      if (c == '\n') continue;  // the LF of a CRLF split across chunks
    }
    if (c == '\n' || c == '\r') {
      line(m_line, out);
      m_line.clear();
      m_after_cr = c == '\r';
      if (m_data.size() > m_max) return std::unexpected("an event of more than " + std::to_string(m_max) + " bytes");
      continue;
    }
    m_line += c;
    if (m_line.size() > m_max) return std::unexpected("a line of more than " + std::to_string(m_max) + " bytes");
  }
  return out;
}

void SseReader::line(std::string_view text, std::vector<SseEvent>& out) {
  if (text.empty()) {
    if (m_has_data) {
      SseEvent event;
      if (!m_type.empty()) event.type = m_type;
      event.data = m_data;
      event.id = m_last_id;
      out.push_back(std::move(event));
    }
    m_type.clear();
    m_data.clear();
    m_has_data = false;
    return;
  }
  if (text.front() == ':') return;  // a comment (servers send them to keep a stream open)
  const auto colon = text.find(':');
  std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  if (value.starts_with(' ')) value.remove_prefix(1);
  if (field == "data") {
    if (m_has_data) m_data += '\n';
    m_data += value;
    m_has_data = true;
  } else if (field == "event") {
    m_type = value;
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) m_last_id = value;
  } else if (field == "retry") {
    if (!value.empty() && value.size() <= 9 &&
        std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
      m_retry = std::chrono::milliseconds(std::stoll(std::string(value)));
  }
}

}  // namespace dispatchd::mcp
