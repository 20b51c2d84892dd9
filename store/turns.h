#pragma once
// Turns: the messages of one conversation that one decision answers.
//
// People write in bursts ("hi", "my order 1234", "it hasn't arrived"). With a TurnRule whose
// `quiet` is above zero, a conversation's unanswered messages are taken together, once none
// has arrived for `quiet` or once the first of them has waited `max`: the first is the
// turn's lead (leased as take_next leases a message), the others join it (the same lease,
// and turn_id = the lead's id on every message of the turn). Every store call about the
// lead's state (decide, finish, postpone, release_lease, a send's outcome) applies to the
// whole turn, with an audit event per message; attempts, tool calls, actions and
// escalations name the lead. A turn holds at most `max_messages`, and ends before a
// message that may not join (TurnRule::joins): those wait for a turn of their own, which
// the lead holds back until it is decided, as any earlier message does.
//
// A message that arrives while the turn is being decided joins it through join_turn (the
// agent then asks again with every message); one that arrives after the decision is
// committed starts a turn of its own.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"

namespace dispatchd::store {

struct TurnRule {
  std::chrono::milliseconds quiet{0};  // 0: one message a turn, taken as soon as it is ready
  std::chrono::milliseconds max{0};    // from the first message; never below `quiet`
  std::size_t max_messages = 20;
  // Whether a message of `channel` and `type` may join a turn (or lead one of several);
  // empty: every message may.
  std::function<bool(std::string_view channel, std::string_view type)> joins;
};

// When a conversation whose unanswered messages arrived first at `first` and last at `last`
// is ready to be taken: `quiet` after the last, or `max` after the first, whichever comes
// sooner. Pure.
Instant turn_ready_at(Instant first, Instant last, const TurnRule& rule);

struct TakenTurn {
  std::optional<Leased> taken;  // the lead, with the messages that joined it
  // Nothing taken: the soonest a conversation now waiting for its quiet time may be ready
  // (a lower bound; take again then). Unset: none is waiting.
  std::optional<Instant> wake_at;
};

// take_next by turns: with rule.quiet at 0 it takes what take_next takes (and a lead whose
// turn a previous take formed comes back with its members). Otherwise the oldest ready
// conversation's lead is taken with every unanswered message after it that may join.
[[nodiscard]] Result<TakenTurn> take_turn(Database& db, const std::string& worker, Instant now,
                                          std::chrono::seconds lease, const TurnRule& rule);

// For a lead taken by take_turn and still held (hold_lease): the messages of its
// conversation that arrived since and may join, joined to its turn under its lease (at most
// up to rule.max_messages in all); appended to lead.joined, and returned. Empty: none came.
[[nodiscard]] Result<std::vector<TurnMessage>> join_turn(Database& db, Leased& lead, const std::string& worker,
                                                         const TurnRule& rule);

}  // namespace dispatchd::store
