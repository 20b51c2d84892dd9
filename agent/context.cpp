#include "agent/context.h"

namespace dispatchd::agent {

std::string turn_text(const store::Leased& lead) {
  std::string out = lead.text;
  for (const auto& joined : lead.joined) out += "\n" + joined.text;
  return out;
}

std::string window_line(const ReplyWindow& window) {
  if (window.open) {
    std::string line = "The customer's reply window is open";
    if (window.closes_at) line += " until " + store::format_time(*window.closes_at);
    return line + ": free-form replies reach them until then.";
  }
  std::string line = "The customer's reply window is closed";
  if (window.closes_at) line += " (it closed at " + store::format_time(*window.closes_at) + ")";
  return line + ": a free-form reply cannot reach them; only template actions can.";
}

std::string first_turn(const std::vector<store::HistoryEntry>& history, const Inbound& inbound) {
  std::string out;
  if (!history.empty()) {
    out += "Conversation so far (oldest first):\n";
    for (const auto& entry : history) {
      out += entry.from_us ? "[we replied] " : "[customer] ";
      out += entry.text;
      out += "\n";
    }
    out += "\n";
  }
  if (inbound.messages > 1)
    out += "The customer wrote " + std::to_string(inbound.messages) +
           " messages in a row, below oldest first, one per line: answer them together.\n";
  if (inbound.window) out += window_line(*inbound.window) + "\n";
  out += "New " + inbound.channel + " message from " + inbound.sender + ":\n";
  out += inbound.text;
  out += "\n\nChoose ONE action from the catalog and reply with ONE JSON object.";
  return out;
}

llm::CompletionRequest build_request(const std::string& system, const std::string& first,
                                     const std::vector<ToolExchange>& tools, const std::optional<FailedPair>& failed,
                                     std::shared_ptr<const llm::OutputSchema> schema) {
  llm::CompletionRequest request{system, {{llm::Role::user, first}}, std::move(schema)};
  for (const auto& tool : tools) {
    request.turns.push_back({llm::Role::assistant, tool.call});
    request.turns.push_back({llm::Role::user, "The tool answered:\n" + tool.result +
                                                  "\n\nNow choose the next action and reply with ONE JSON object."});
  }
  if (failed && failed->output.empty()) {
    // Nothing came back to show (e.g. a reply a safety filter withheld): providers refuse
    // an empty assistant turn, so the feedback joins the last user turn.
    request.turns.back().text += "\n\n" + failed->feedback;
  } else if (failed) {
    request.turns.push_back({llm::Role::assistant, failed->output});
    request.turns.push_back({llm::Role::user, failed->feedback});
  }
  return request;
}

}  // namespace dispatchd::agent
