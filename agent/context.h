#pragma once
// The model's context for one message, built from values (pure): the system text, then one
// user turn with the conversation so far and the inbound message, then the tool exchanges
// of this message, then at most one failed pair (the previous raw output and the
// validator's feedback; with no output, the feedback is added to the last user turn). The
// context does not grow with each re-ask: only the last failed pair is kept, and the
// original message always stays in.

#include <optional>
#include <string>
#include <vector>

#include "common/reply_window.h"
#include "llm/provider.h"
#include "store/inbox.h"

namespace dispatchd::agent {

struct Inbound {
  std::string channel;       // "whatsapp" | "gmail"
  std::string sender;        // the counterpart: the only allowed recipient
  std::string text;          // the message; a turn's messages, each on its own line (turn_text)
  std::size_t messages = 1;  // how many messages `text` holds
  // The counterpart's reply window when the channel has one: a line before the message
  // says whether it is open and until when (window_line).
  std::optional<ReplyWindow> window = std::nullopt;
};

// What the model is told about the reply window: open until when (UTC, ISO 8601), or
// closed, so that only template actions reach the customer.
std::string window_line(const ReplyWindow& window);

// The text of a turn of several messages (store/turns.h) as the model and the validator see
// it: each message, oldest first, on a line of its own.
std::string turn_text(const store::Leased& lead);

// A read-only tool call and what it returned, fed back to the model.
struct ToolExchange {
  std::string call;    // the model's validated reply that asked for the tool (compact JSON)
  std::string result;  // what the tool answered (size-capped), or why it failed
};

struct FailedPair {
  std::string output;    // the rejected raw output, as the model wrote it; empty when none came back
  std::string feedback;  // the validator's feedback text, or why the provider's answer was not used
};

// The first user turn: history, then the message (or the turn's messages) to act on.
std::string first_turn(const std::vector<store::HistoryEntry>& history, const Inbound& inbound);

llm::CompletionRequest build_request(const std::string& system, const std::string& first,
                                     const std::vector<ToolExchange>& tools, const std::optional<FailedPair>& failed,
                                     std::shared_ptr<const llm::OutputSchema> schema);

}  // namespace dispatchd::agent
