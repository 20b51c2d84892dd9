#pragma once
// Erasing one customer's personal data on request, with the audit chain intact.
//
// The counterpart is a WhatsApp wa_id or an email address, as inbox.sender holds it (an
// address is compared in lower case; a leading '+' on a number is dropped). Their data is
// replaced, in one transaction, for their messages (inbox.sender = counterpart) and for any
// action addressed to them:
//   inbox         text, raw_payload -> "[erased]"; sender, and conversation_id where it is
//                 the counterpart (WhatsApp) -> the counterpart's digest, the same for every
//                 row, so their messages still group; a provider_message_id of a channel in
//                 digest_provider_ids_of (WhatsApp: a wamid encodes the number) -> "erased:" +
//                 its own salted digest (unique)
//   attempts      raw_output -> "[erased]" (NULL stays NULL); errors -> []
//   spend_conversation_days  conversation_id where it is the counterpart -> the digest
//   actions       arguments -> {"erased":true}; body, error -> "[erased]"; recipient -> the
//                 digest (or "[erased]" for any other recipient); provider ids as above
//   escalations   detail, proposed_action -> {"erased":true}; resolution (staff's note) -> "[erased]"
//   media         each file of their messages -> state erased, its bytes deleted (a blob that
//                 another customer's identical file still uses stays), provider_ref ->
//                 "[erased]", filename, declared sha256 and reason -> NULL; size, kind and
//                 types stay
//   audit         each event of their messages, or whose detail names the counterpart, loses
//                 its salt and its detail becomes {"erased":true} (store/audit_digest.h: the
//                 chain committed to the detail only through the salted digest, so it still
//                 verifies, and without the salt the digest can't be turned back into data)
// Internal ids, timestamps, states, outcomes, action names, escalation reasons, models,
// token counts, staff names and digests remain. The digest is "erased:" + sha256 of a salt
// drawn for this erasure and then forgotten: it groups rows, it names nobody.
// WhatsApp profile names are not stored (the webhook's contacts are not kept), and Gmail
// thread and message ids (which encode no address) stay.
//
// Refused (ErrorKind::refused, nothing changed) while the agent or staff are not finished
// with the counterpart: a message received, processing or decided (a reply not yet sent),
// an action proposed, approved or sending, an escalation open or claimed. The error lists
// them; run again once they are done (or resolve the escalations). Erasing mid-way would let
// the daemon write the data back from memory.
// not_found when the inbox holds no message from the counterpart.
//
// Afterwards the freed space is scrubbed: the erasing transaction runs with
// secure_delete=ON; then, unless `vacuum` is false, VACUUM rewrites the file (dropping stale
// copies that earlier updates left in free space; writers wait meanwhile); then the WAL is
// checkpointed and truncated (TRUNCATE), retried while readers hold it. What could not be
// done is reported in EraseResult, not as an error: the erasure itself is committed.

#include <cstdint>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"

namespace dispatchd::store {

struct EraseRequest {
  std::string counterpart;  // wa_id or email address
  std::string actor;        // who asked (the audit event's actor)
  bool vacuum = true;
  // The channels whose provider message ids carry the counterpart's address (WhatsApp's
  // wamid encodes the number; connectors::Kind::provider_ids_name_counterpart): theirs
  // become digests; other channels' ids stay.
  std::vector<std::string> digest_provider_ids_of;
};

struct EraseResult {
  std::string digest;  // how the rows (and the audit event) name the counterpart now
  std::int64_t messages = 0;
  std::int64_t attempts = 0;
  std::int64_t actions = 0;
  std::int64_t escalations = 0;
  std::int64_t audit_events = 0;  // rows whose detail was erased (the 'erased' event excluded)
  std::int64_t media_files = 0;   // files of their messages (photos, voice notes, documents)
  std::int64_t audit_id = 0;      // the 'erased' event
  struct Scrub {
    bool vacuumed = false;
    bool wal_truncated = false;
    std::string problem;  // why VACUUM or the truncation did not happen; "" when both did
  } scrub;
};

// The counterpart as stored: lower-case address, number without a leading '+'.
std::string normalize_counterpart(std::string_view counterpart);

[[nodiscard]] Result<EraseResult> erase_counterpart(Database& db, const EraseRequest& request, Time now);

// The scrub on its own (with secure_delete=ON while it runs): for an erasure whose scrub
// could not finish, e.g. while readers held the WAL. REQUIRES: outside any transaction.
EraseResult::Scrub scrub_free_space(Database& db, bool vacuum);

}  // namespace dispatchd::store
