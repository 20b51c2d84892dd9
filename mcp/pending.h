#pragma once
// The client's requests in flight on one connection to an MCP server: ids handed out in
// order, each with its method and deadline, matched to answers by id (servers answer out of
// order, and send notifications and requests of their own in between). A request whose
// deadline passes is given up: expire() reports it once (the caller sends
// notifications/cancelled and fails its waiter), and an answer that still comes for it is
// recognized as late and ignored. Pure: the time is passed in, nothing is sent from here.

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mcp/protocol.h"

namespace dispatchd::mcp {

class Pending {
 public:
  using Clock = std::chrono::steady_clock;

  struct Request {
    RequestId id = 0;
    std::string method;
    Clock::time_point deadline;
  };

  // A new request's id: 1, 2, 3, ... on this connection, never reused.
  RequestId add(std::string method, Clock::time_point deadline);

  enum class AnswerKind {
    expected,  // the request was waiting: it is removed and returned
    late,      // the request was given up on (expire): ignore the answer
    unknown,   // no such request waits: never sent, answered already, or given up long ago
  };
  struct Answer {
    AnswerKind kind = AnswerKind::unknown;
    std::optional<Request> request;  // set when expected
  };
  // What an answer carrying `id` is.
  Answer answer(RequestId id);

  // The waiting requests whose deadline is at or before `now`, oldest id first: removed and
  // remembered as given up (the last k_remembered of them).
  std::vector<Request> expire(Clock::time_point now);

  // Every waiting request, removed: the connection is gone and each fails.
  std::vector<Request> drain();

  // The earliest deadline among the waiting requests, for the caller's timer.
  std::optional<Clock::time_point> next_deadline() const;
  std::size_t waiting() const { return m_waiting.size(); }

  // How many given-up ids are remembered to tell a late answer from an unknown one.
  static constexpr std::size_t k_remembered = 1024;

 private:
  void give_up(RequestId id);

  RequestId m_next = 1;
  std::map<RequestId, Request> m_waiting;
  std::deque<RequestId> m_given_up_order;
  std::set<RequestId> m_given_up;
};

}  // namespace dispatchd::mcp
