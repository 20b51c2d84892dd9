#pragma once
// Reading ahead: what storing inbound events and taking their messages will read, read first
// on another connection, so that the event loop's connection then finds those pages in memory.
//
// On a long history each message lands on pages of its own (its wamid's place in the inbox's
// unique index, its sender's and its conversation's places, its conversation's newest rows
// and their replies for the prompt; a delivery report's action and message), and after a
// restart those pages are on disk: read on the loop, a round of webhooks held it for 17 to 61
// ms (BENCHMARKS.md, "webhooks from the history's own customers"). Read here, on a thread
// of the caller's, the loop's reads come from the operating system's page cache. The daemon
// reads ahead on SQLite only (daemon/service.cpp); the reads are the same on PostgreSQL.
//
// It changes nothing and returns nothing the caller needs: an error only says the pages
// were not all read (the events are stored as they would have been). Thread-safety: as the
// Database, one thread at a time.

#include <cstddef>
#include <span>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/outbox.h"

namespace dispatchd::store {

// Reads, for each message, its dedupe key's place, its sender's newest message (the 24-hour
// window's check) and newest reply (where the answer's action goes), and its conversation's
// newest `history` messages with their replies (the prompt); for each report, the action it names and that action's
// message. The messages' text and raw payload are not used: callers may leave them empty.
[[nodiscard]] Result<void> read_ahead(Database& db, std::span<const InboundMessage> messages,
                                      std::span<const DeliveryReport> reports, std::size_t history);

}  // namespace dispatchd::store
