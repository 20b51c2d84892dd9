#pragma once
// What the agent reads of a conversation's recent past before it asks the model about a
// turn (agent/runaway.h decides from it), and the holds on conversations dispatchd stopped
// answering (migration 0023's conversation_holds).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/states.h"

namespace dispatchd::store {

struct ConversationActivity {
  struct Turn {
    Instant arrived{};  // its last message's arrival (received_at for rows before 0022)
    std::string text;   // its messages' texts, one per line
  };
  struct Reply {
    Instant sent{};  // when it was sent (to the second); when it was queued for one not sent yet
    std::string text;
    std::size_t turn = 0;  // the index in `turns` of the turn it answers
  };
  std::vector<Turn> turns;     // the counterpart's turns before this one, oldest first
  std::vector<Reply> replies;  // our messages to the counterpart in answer to them, in turn order
  Instant arrived{};           // the arrival of this turn's last message
};

// The activity before the turn led by message `lead`: the conversation's messages before it
// received at `since` or later, at most the last `limit` (a backward walk of
// inbox_conversation that stops at the first older one: a long-time customer's history is
// not read), grouped into turns; the messages sent or queued in answer to them (not tool
// calls, not proposals); and this turn's arrival.
[[nodiscard]] Result<ConversationActivity> conversation_activity(Database& db, std::int64_t lead, Time since,
                                                                 std::size_t limit = 200);

struct ConversationHold {
  std::int64_t escalation_id = 0;
  EscalationReason reason = EscalationReason::conversation_limit;
  std::string since;
};

// The hold on `conversation_id`, if any: while its escalation is open, the conversation is
// not answered.
[[nodiscard]] Result<std::optional<ConversationHold>> conversation_hold(Database& db,
                                                                        const std::string& conversation_id);

// Holds `conversation_id` until escalation `escalation_id` is resolved or dismissed (a
// trigger releases it then). A conversation already held keeps its first hold.
[[nodiscard]] Result<void> hold_conversation(Database& db, const std::string& conversation_id,
                                             std::int64_t escalation_id, EscalationReason reason, Time now);

}  // namespace dispatchd::store
