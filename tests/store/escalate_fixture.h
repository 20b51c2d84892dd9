#pragma once
// An inbound message with an escalation open (its audit event included), for the tests of what follows an
// escalation (the notification feed, the notifier).

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "store/inbox.h"
#include "store/queue.h"

namespace dispatchd::test {

// Stores message `id` from `sender` with `text` on `channel` and opens an escalation for it;
// returns the escalation's id.
inline std::int64_t escalate(store::Database& db, const std::string& id, const std::string& sender,
                             const std::string& text, store::EscalationReason reason, store::Time now,
                             const std::string& channel = "whatsapp") {
  auto message = store::insert_inbound(db, {channel, id, sender, sender, text, "{}"}, now);
  REQUIRE(message);
  auto opened = store::open_escalation(db, {message->id, reason, "{}", std::nullopt, std::nullopt}, now);
  REQUIRE(opened);
  return *opened;
}

}  // namespace dispatchd::test
