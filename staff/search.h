#pragma once
// Search and history on the staff desk (docs/staff.md, "Search and history"): what staff
// type into a search (the API's query, dispatchctl queue search's flags) checked once for
// both and turned into a store::EscalationSearch, plus the JSON of a customer's history.
//
// read_search() is pure (no store, no clock): tested as a table.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/history.h"

namespace dispatchd::staff {

// Page sizes of a search and of a customer's messages, and the most other cases a case shows.
inline constexpr std::int64_t k_search_page_default = 50;
inline constexpr std::int64_t k_search_page_max = 200;
inline constexpr std::int64_t k_history_cases = 50;

// A search as typed; an absent or empty member does not filter.
struct SearchInput {
  std::optional<std::string> customer;  // a number ("+52 1 55-3456-7890") or an address, or part of one
  std::optional<std::string> text;      // in the message or a note
  std::optional<std::string> reason;    // an escalation reason
  std::optional<std::string> status;    // open, claimed, resolved or dismissed
  std::optional<std::string> from;      // YYYY-MM-DD, the first day (UTC)
  std::optional<std::string> to;        // YYYY-MM-DD, the last day (UTC), included
  std::optional<std::string> before;    // an escalation id: the next page
  std::optional<std::string> limit;     // 1 to k_search_page_max
};

// The search, or why it is refused (a message for a 400 or a usage error). A number is
// matched without its spaces, dashes, dots, parentheses and leading "+" (WhatsApp stores
// the digits only); an address (anything with "@") as typed, trimmed. `to` is included:
// the store's bound is the next day. At least one filter is not required: an empty search
// lists every escalation, newest first.
[[nodiscard]] std::expected<store::EscalationSearch, std::string> read_search(const SearchInput& input);

// The customer as matched against senders: see read_search.
std::string customer_key(std::string_view typed);

// The day after a YYYY-MM-DD date, in the same form; nullopt when `date` is not a real date
// in that form.
std::optional<std::string> next_day(std::string_view date);

// A case's customer history: {"cases":[...other escalations, newest first, as in a listing...],
// "messages":[{"message_id","conversation_id","received_at","text","escalation_id"|null,
// "replies":[{"action_id","action","body","status","created_by","updated_at"}]}],
// "next": the message id to pass as `before` for older ones, or null}. `cases` is omitted
// (null) on pages after the first.
std::string history_json(const std::optional<std::vector<store::EscalationRow>>& cases,
                         const std::vector<store::CustomerMessage>& messages, bool more);

}  // namespace dispatchd::staff
