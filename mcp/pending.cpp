#include "mcp/pending.h"

#include <algorithm>
#include <utility>

namespace dispatchd::mcp {

RequestId Pending::add(std::string method, Clock::time_point deadline) {
  const RequestId id = m_next++;
  m_waiting.emplace(id, Request{id, std::move(method), deadline});
  return id;
}

Pending::Answer Pending::answer(RequestId id) {
  if (const auto it = m_waiting.find(id); it != m_waiting.end()) {
    Answer out{AnswerKind::expected, std::move(it->second)};
    m_waiting.erase(it);
    return out;
  }
  if (m_given_up.contains(id)) return {AnswerKind::late, std::nullopt};
  return {AnswerKind::unknown, std::nullopt};
}

std::vector<Pending::Request> Pending::expire(Clock::time_point now) {
  std::vector<Request> out;
  for (auto it = m_waiting.begin(); it != m_waiting.end();) {
    if (it->second.deadline <= now) {
      out.push_back(std::move(it->second));
      it = m_waiting.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& request : out) give_up(request.id);
  return out;
}

std::vector<Pending::Request> Pending::drain() {
  std::vector<Request> out;
  out.reserve(m_waiting.size());
  for (auto& [id, request] : m_waiting) out.push_back(std::move(request));
  m_waiting.clear();
  return out;
}

std::optional<Pending::Clock::time_point> Pending::next_deadline() const {
  if (m_waiting.empty()) return std::nullopt;
  const auto earliest = std::min_element(m_waiting.begin(), m_waiting.end(), [](const auto& a, const auto& b) {
    return a.second.deadline < b.second.deadline;
  });
  return earliest->second.deadline;
}

void Pending::give_up(RequestId id) {
  m_given_up.insert(id);
  m_given_up_order.push_back(id);
  if (m_given_up_order.size() > k_remembered) {
    m_given_up.erase(m_given_up_order.front());
    m_given_up_order.pop_front();
  }
}

}  // namespace dispatchd::mcp
