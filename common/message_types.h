#pragma once
// What dispatchd does with an inbound message of one type: each channel's
// `connectors.<name>.message_types` (read with json::SettingsReader::message_types), the
// agent's type rules. Every message is recorded in the inbox whatever its handling.

#include <map>
#include <string>

namespace dispatchd::common {

enum class TypeAction {
  model,     // described to the model, which chooses a catalog action
  escalate,  // an `undecodable` escalation naming the type; no model call
  reply,     // `reply_text` to the sender through the outbox (the channel's rules apply); no model call
  ignore,    // finished with outcome `ignored`; nothing sent, no model call
};

struct TypeHandling {
  TypeAction action = TypeAction::model;
  std::string reply_text;  // TypeAction::reply: the fixed text, written by staff

  bool operator==(const TypeHandling&) const = default;
};

// A channel's message types, each with its handling: every type the channel gives has an entry.
using MessageTypes = std::map<std::string, TypeHandling>;

}  // namespace dispatchd::common
