#pragma once
// Saved replies (migration 0029; docs/staff.md, "Saved replies"): reply texts kept for staff
// to pick from. The store keeps the rows; what a text may hold (its placeholders) is
// staff/saved_replies.h's rule, checked by the caller before a text is stored. Every change
// appends an audit event with no message id in the same transaction:
// saved_reply_added | saved_reply_changed | saved_reply_removed, detail {"saved_reply": id,
// "name", "text"} (no text for a removal).
//
// Removing keeps the row (removed_at set), so that the audit trail's ids keep their
// meaning; a removed reply is neither listed nor found, and its name may be used again.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"

namespace dispatchd::store {

struct SavedReply {
  std::int64_t id = 0;
  std::string name;
  std::string text;
  std::string created_by;
  std::string created_at;
  std::string updated_at;
};

// Adds a reply; refused when an active reply has that name. Returns its id.
[[nodiscard]] Result<std::int64_t> add_saved_reply(Database& db, const std::string& name, const std::string& text,
                                                   const std::string& actor, Time now);

// Replaces an active reply's text; not_found when there is none with that id.
[[nodiscard]] Result<void> change_saved_reply(Database& db, std::int64_t id, const std::string& text,
                                              const std::string& actor, Time now);

// Removes an active reply; not_found when there is none with that id.
[[nodiscard]] Result<void> remove_saved_reply(Database& db, std::int64_t id, const std::string& actor, Time now);

// The active reply `id`; not_found when there is none.
[[nodiscard]] Result<SavedReply> find_saved_reply(Database& db, std::int64_t id);

// The active replies, by name.
[[nodiscard]] Result<std::vector<SavedReply>> list_saved_replies(Database& db);

}  // namespace dispatchd::store
