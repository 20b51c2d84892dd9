#pragma once
// Search and history on the staff desk (docs/staff.md, "Search and history"), read through
// the views like every staff read (store/views.h).
//
// A customer is a channel and a sender: the WhatsApp number or the email address the
// channel stored for the message. Their history runs across conversations: every message
// they sent on that channel, whatever thread or escalation it belongs to.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/states.h"
#include "store/views.h"

namespace dispatchd::store {

// An unset member does not filter. Matching is a substring match that ignores the case of
// ASCII letters; the caller (staff/search.h) checks and normalizes what staff typed.
struct EscalationSearch {
  std::optional<std::string> customer;  // in the message's sender
  std::optional<std::string> text;      // in the message's text or in one of the case's notes
  std::optional<EscalationReason> reason;
  std::optional<EscalationStatus> status;
  std::optional<std::string> from;     // created_at >= this (an ISO 8601 UTC prefix: "2026-12-01")
  std::optional<std::string> until;    // created_at < this
  std::optional<std::int64_t> before;  // an escalation id: only the ones opened before it (the next page)
  std::int64_t limit = 50;
};

// The matching escalations, newest first (by created_at, then id).
[[nodiscard]] Result<std::vector<EscalationRow>> search_escalations(Database& db, const EscalationSearch& search);

// The escalations of the customer of escalation `id` other than `id` itself, newest first,
// at most `limit`. not_found when there is no escalation `id`.
[[nodiscard]] Result<std::vector<EscalationRow>> customer_escalations(Database& db, std::int64_t id,
                                                                      std::int64_t limit);

// One message of a customer's history and what was sent in answer to it (not proposals
// waiting or rejected), with the escalation it raised, if any.
struct CustomerMessage {
  MessageRow message;
  std::vector<ActionRow> replies;
  std::optional<std::int64_t> escalation_id;
};

// A page of the messages of the customer of escalation `id`, newest first: at most `limit`
// with message ids below `before` (all when unset). Keyset paging: a page stays put while
// new messages arrive. not_found when there is no escalation `id`.
[[nodiscard]] Result<std::vector<CustomerMessage>> customer_messages(Database& db, std::int64_t id,
                                                                     std::optional<std::int64_t> before,
                                                                     std::int64_t limit);

}  // namespace dispatchd::store
