// The MCP client's requests in flight: answers matched by id in any order, deadlines that
// give a request up once, and late answers told from unknown ones.
#include <catch2/catch.hpp>

#include "mcp/pending.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using mcp::Pending;
using Kind = Pending::AnswerKind;

TEST_CASE("mcp pending: ids in order, answers matched in any order, each once", "[mcp]") {
  Pending pending;
  const Pending::Clock::time_point t0{};
  CHECK(pending.add("initialize", t0 + 10s) == 1);
  CHECK(pending.add("tools/list", t0 + 5s) == 2);
  CHECK(pending.add("tools/call", t0 + 30s) == 3);
  CHECK(pending.waiting() == 3);
  CHECK(pending.next_deadline() == t0 + 5s);

  const auto third = pending.answer(3);
  CHECK(third.kind == Kind::expected);
  REQUIRE(third.request);
  CHECK(third.request->method == "tools/call");
  CHECK(pending.answer(3).kind == Kind::unknown);   // answered twice: the second is nothing
  CHECK(pending.answer(99).kind == Kind::unknown);  // never sent
  CHECK(pending.answer(1).request->method == "initialize");
  CHECK(pending.waiting() == 1);
  CHECK(pending.next_deadline() == t0 + 5s);
}

TEST_CASE("mcp pending: a deadline gives a request up once, its answer is then late", "[mcp]") {
  Pending pending;
  const Pending::Clock::time_point t0{};
  const auto slow = pending.add("tools/call", t0 + 2s);
  const auto fast = pending.add("tools/call", t0 + 1s);
  const auto later = pending.add("tools/list", t0 + 9s);

  CHECK(pending.expire(t0 + 500ms).empty());
  const auto expired = pending.expire(t0 + 2s);  // the deadline itself counts
  REQUIRE(expired.size() == 2);
  CHECK(expired[0].id == slow);
  CHECK(expired[1].id == fast);
  CHECK(pending.expire(t0 + 3s).empty());  // reported once
  CHECK(pending.answer(slow).kind == Kind::late);
  CHECK(pending.answer(fast).kind == Kind::late);
  CHECK(pending.next_deadline() == t0 + 9s);
  CHECK(pending.answer(later).kind == Kind::expected);
  CHECK_FALSE(pending.next_deadline().has_value());
}

TEST_CASE("mcp pending: a lost connection fails everything waiting, ids are never reused", "[mcp]") {
  Pending pending;
  const Pending::Clock::time_point t0{};
  pending.add("initialize", t0 + 1s);
  pending.add("tools/list", t0 + 1s);
  const auto drained = pending.drain();
  CHECK(drained.size() == 2);
  CHECK(pending.waiting() == 0);
  CHECK(pending.answer(1).kind == Kind::unknown);
  CHECK(pending.add("initialize", t0 + 1s) == 3);
}

TEST_CASE("mcp pending: the given-up ids remembered are bounded", "[mcp]") {
  Pending pending;
  const Pending::Clock::time_point t0{};
  const std::size_t n = Pending::k_remembered + 10;
  for (std::size_t i = 0; i < n; ++i) pending.add("tools/call", t0);
  CHECK(pending.expire(t0).size() == n);
  CHECK(pending.answer(1).kind == Kind::unknown);  // forgotten: still ignored, counted as unknown
  CHECK(pending.answer(static_cast<mcp::RequestId>(n)).kind == Kind::late);
}
