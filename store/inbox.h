#pragma once
// The inbox: inbound messages stored once, then taken by workers under a lease.
//
// - Unique on (channel, provider_message_id): a redelivered event returns the existing row.
// - A message is taken with a lease (state 'processing' until lease_expires_at); a message
//   whose lease expired is taken again, so a dead worker loses nothing.
// - Per conversation, messages are taken in the order their rows were committed: a message
//   waits while an earlier one of its conversation is still received or processing (a
//   decided one, whose reply is in the outbox, no longer holds the next back).
// Every insert appends a 'received' audit event in the same transaction.

#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/states.h"

namespace dispatchd::store {

using Time = std::chrono::sys_seconds;
// When a message reached dispatchd, to the millisecond: bursts are timed by it (store/turns.h).
// A Time converts to it by itself.
using Instant = std::chrono::sys_time<std::chrono::milliseconds>;
// The store's Time of an Instant: its whole seconds.
inline Time whole_seconds(Instant t) { return std::chrono::floor<std::chrono::seconds>(t); }

// "2026-11-30T12:00:00Z": the one timestamp format of the store (sorts as text).
std::string format_time(Time t);
// The inverse of format_time; nullopt for any other shape.
std::optional<Time> parse_time(std::string_view text);

// A file of an inbound message as its channel describes it, before it is fetched
// (store/media.h keeps it).
struct MediaRef {
  MediaKind kind = MediaKind::document;
  std::string provider_ref;     // the channel's handle: a WhatsApp media id, a Gmail attachment id
  std::string declared_type;    // the content type the channel declared ("" when none)
  std::string declared_sha256;  // lower-case hex, "" when the channel declares none
  std::string filename;         // "" when none
  bool voice = false;           // audio recorded as a voice note

  bool operator==(const MediaRef&) const = default;
};

struct InboundMessage {
  std::string channel;              // "whatsapp" | "gmail"
  std::string provider_message_id;  // wamid or Gmail message id
  std::string conversation_id;
  std::string sender;  // the counterpart
  std::string text;
  std::string raw_payload;
  std::string type;             // the channel's message type ("image", ...); "" for none (stored as NULL)
  std::vector<MediaRef> media;  // its files, fetched after it is stored (store/media.h)
};

struct InsertResult {
  std::int64_t id = 0;
  bool duplicate = false;  // already stored: nothing was written
};

// received_at is `now` in whole seconds, arrived_ms `now` to the millisecond.
[[nodiscard]] Result<InsertResult> insert_inbound(Database& db, const InboundMessage& message, Instant now);

// A message that joined a turn led by another (store/turns.h).
struct TurnMessage {
  std::int64_t id = 0;
  std::string text;
  std::string type;  // "" for none
  std::string provider_message_id;
};

struct Leased {
  std::int64_t id = 0;
  std::string conversation_id;
  std::string sender;
  std::string text;
  std::string channel;
  Time received_at{};
  std::string type;  // as stored by insert_inbound ("" for none)
  // The lease_expires_at this take wrote: with the worker it names this take, which
  // hold_lease checks (a later take of the same message writes a later one).
  std::string lease_token;
  // The messages after this one that its decision answers too, oldest first (take_turn,
  // join_turn); empty for a message answered on its own.
  std::vector<TurnMessage> joined;
  std::string provider_message_id;  // the channel's id of the message (a wamid, a Gmail id)
};

// Takes the oldest message that is 'received' or whose lease expired and that no earlier
// unfinished message of its conversation blocks; nullopt when none is ready.
[[nodiscard]] Result<std::optional<Leased>> take_next(Database& db, const std::string& worker, Time now,
                                                      std::chrono::seconds lease);

// Whether this take still holds the message: it is processing, leased to `worker` by this
// very take (taken.lease_token). False once another take has it, which happens only after
// this lease ran out (another instance, or this one again), or once it left processing.
// The fence of a worker that was paused past its lease (a stopped VM, a long GC-like
// stall): it calls this first in the transaction of each write about the message and
// writes nothing when false. On PostgreSQL the row is then locked (FOR NO KEY UPDATE) until
// that transaction ends, so no instance can take it between the check and the writes;
// SQLite's one writer gives the same.
[[nodiscard]] Result<bool> hold_lease(Database& db, const Leased& taken, const std::string& worker);

// Of a taken message and the messages that joined its turn (store/turns.h), every call
// below that changes its state changes theirs with it, each with its audit event.

// Leaves a taken message in processing with no holder until `until`, when take_next hands
// it out again (a provider outage: the message waits, nothing is dropped).
[[nodiscard]] Result<void> postpone(Database& db, std::int64_t id, Time until);

// Ends the postponement of each of `ids` that is still postponed (in processing with no
// holder): take_next hands them out at once (the provider answers again). Returns how many
// were waiting; the others were taken or decided meanwhile.
[[nodiscard]] Result<std::int64_t> release_postponed(Database& db, const std::vector<std::int64_t>& ids);

struct HistoryEntry {
  std::string at;
  bool from_us = false;  // a reply we sent; else a message from the counterpart
  std::string text;
};

// The conversation before `message_id`: its newest `limit` earlier messages and the replies
// sent to them, at most `limit` entries (the newest), oldest first. The work is bounded by
// `limit`, not by the conversation's length. A reply sent late (staff approving an old
// escalation) to a message older than those `limit` is left out.
[[nodiscard]] Result<std::vector<HistoryEntry>> history(Database& db, std::int64_t message_id, std::size_t limit);

// The inbound message `message_id` as stored: its raw payload (the channel's own format:
// a WhatsApp webhook message object, an email's RFC 822 bytes) and conversation; for a
// channel that needs the original when it answers (Gmail's In-Reply-To and thread).
struct StoredInbound {
  std::string channel;
  std::string provider_message_id;
  std::string conversation_id;
  std::string raw_payload;
};
[[nodiscard]] Result<StoredInbound> stored_inbound(Database& db, std::int64_t message_id);  // not_found when absent

// Of `provider_ids` on `channel`, those not in the inbox yet, in their order: a polling
// channel fetches only these (a repeated or resumed poll does not fetch what it stored).
[[nodiscard]] Result<std::vector<std::string>> not_stored(Database& db, const std::string& channel,
                                                          const std::vector<std::string>& provider_ids);

// When the counterpart last wrote on `channel` (their newest message's received_at), for
// rules such as WhatsApp's 24-hour customer-service window.
[[nodiscard]] Result<std::optional<Time>> last_inbound_at(Database& db, const std::string& channel,
                                                          const std::string& sender);

// Makes every lease `worker` holds expire now, so that its messages are taken again at once
// (at start-up, for what the previous run of the same worker left in processing), and so
// its downloads of files (store/media.h: release_media_leases).
[[nodiscard]] Result<void> release_leases(Database& db, const std::string& worker);

// Makes the lease on message `id` expire now, if `worker` holds it: the message is taken
// again at once (its decision was not stored: the round's COMMIT failed). A message in
// another state, or leased to someone else, is left as it is.
[[nodiscard]] Result<void> release_lease(Database& db, std::int64_t id, const std::string& worker);

// processing -> decided: the message's action is in the outbox (or its escalation is
// open); it is done when the send completes. The lease no longer matters once decided: a
// decided message is never taken again. A 'decided' audit event is appended.
[[nodiscard]] Result<void> decide(Database& db, std::int64_t id, Time now);

// Marks a taken message done with its outcome (replied, escalated or ignored: pending is
// refused), with a 'done' audit event in the same transaction; a non-empty `why` is added to
// its detail.
[[nodiscard]] Result<void> finish(Database& db, std::int64_t id, Outcome outcome, Time now,
                                  const std::string& why = "");

}  // namespace dispatchd::store
