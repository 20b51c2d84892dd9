#pragma once
// Runaway conversations, decided from values (pure): before the model is asked about a turn,
// whether the conversation is past its reply limits, or looks like a loop with another bot
// or with our own replies echoed back. Either holds the conversation: one escalation
// (conversation_limit or suspected_loop) and no more answers until staff close it.
//
//   check                         from                                   verdict
//   ----------------------------  -------------------------------------  ------------------
//   echo                          the turn's text is one of our recent   suspected_loop
//                                 replies (normalised)
//   repeat                        the last `repeats` turns, this one     suspected_loop
//                                 included, have the same text
//   bot cadence                   after each of our last `cadence_turns` suspected_loop
//                                 replies the counterpart wrote within
//                                 `cadence`
//   replies in 10 minutes         our replies since now - 10 min >= max  conversation_limit
//   replies in a day              our replies since now - 24 h >= max    conversation_limit
//   otherwise                                                            answer
//
// The loop checks come first: a bot is usually seen after a few replies, well before the
// limits. tests/agent/runaway_test.cpp holds each row.

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "store/conversations.h"
#include "store/inbox.h"

namespace dispatchd::agent {

struct RunawayLimits {
  int replies_per_10_minutes = 10;  // 0: no limit
  int replies_per_day = 50;         // 0: no limit
  int repeats = 3;                  // 0: no check
  int cadence_turns = 4;            // 0: no check
  std::chrono::milliseconds cadence{2000};
};

// The conversation's recent past, as the store gives it.
using Activity = store::ConversationActivity;

enum class Runaway { answer, conversation_limit, suspected_loop };

struct RunawayVerdict {
  Runaway verdict = Runaway::answer;
  std::string why;  // for staff: which check, with its numbers
};

// Lower case (ASCII), every run of spaces and punctuation one space, trimmed: "Thank you!!"
// and "thank  you" are one text.
std::string normalised(std::string_view text);

// `turn`: the text of the turn about to be decided (its arrival: past.arrived).
RunawayVerdict check_runaway(const Activity& past, std::string_view turn, store::Instant now,
                             const RunawayLimits& limits);

}  // namespace dispatchd::agent
