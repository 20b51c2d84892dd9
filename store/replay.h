#pragma once
// Recorded model attempts with their message, read for `dispatchctl replay`: every attempt
// the agent recorded, with what the validator needs to judge its raw output again (the
// message's sender and text, exactly as the agent passed them), in received_at order.
//
// Read through the documented views (v_messages, v_attempts) in keyset pages: first the
// messages' keys in order, then their attempts in small batches. Each call is one short
// read, so a replay of a large history never holds a read snapshot for long (which would
// keep the WAL from being checkpointed while the daemon writes).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/states.h"

namespace dispatchd::store {

struct RecordedAttempt {
  std::int64_t attempt = 0;
  std::string provider;
  std::string model;
  std::optional<std::string> raw_output;  // none when the call returned no text
  Verdict verdict = Verdict::invalid;     // as recorded
  std::string errors;                     // the recorded errors, JSON array
  std::optional<std::string> error_class;
  std::optional<std::string> finish_reason;
};

struct RecordedMessage {
  std::int64_t id = 0;  // v_messages.message_id
  std::string channel;
  std::string provider_message_id;
  std::string sender;  // the counterpart, as the agent's validator context has it
  std::string text;    // the inbound text, the agent's grounding source
  std::string received_at;
  std::vector<RecordedAttempt> attempts;  // at least one, in attempt order
};

// A message's place in received_at order.
struct ReplayKey {
  std::string received_at;
  std::int64_t message_id = 0;
};

struct ReplayPage {
  std::optional<std::string> since;  // "YYYY-MM-DD": messages received that UTC day or later
  std::optional<ReplayKey> after;    // keyset: only messages after this one
  std::int64_t messages = 10000;     // at most this many keys
};

// The keys of the next messages, oldest first (received_at, then id), whether or not they
// have attempts; an empty result is the end. Keys only, so that a page can be long: without
// an index on received_at each page costs a scan of the inbox. REQUIRES: page.messages > 0.
Result<std::vector<ReplayKey>> replay_keys(Database& db, const ReplayPage& page);

// The messages of `keys` that have recorded attempts, each with all of them, in the order of
// `keys` (a message without attempts is left out). Everything is read at once: pass a few
// hundred keys at a time.
Result<std::vector<RecordedMessage>> recorded_attempts(Database& db, std::span<const ReplayKey> keys);

}  // namespace dispatchd::store
