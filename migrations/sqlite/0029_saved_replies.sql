-- Saved replies (docs/staff.md, "Saved replies"): reply texts kept for staff to pick from,
-- managed by admins (an admin account, the admin token, dispatchctl on the server). A text
-- may hold placeholders ({customer}, {escalation}, {staff}, {channel}; {{ and }} for a
-- literal brace), checked when it is saved and filled from the case when it is used; the
-- filled text is then sent as any staff reply is. Every change is an audit event
-- (saved_reply_added | saved_reply_changed | saved_reply_removed) with no message id,
-- appended in the same transaction.
--   removed_at   set when removed: the row stays so that the audit trail's ids keep their
--                meaning; a removed reply is no longer listed nor usable, and its name is
--                free again (the name is unique among the replies not removed)
CREATE TABLE saved_replies (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  text       TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  removed_at TEXT
);
CREATE UNIQUE INDEX saved_replies_active_name ON saved_replies (name) WHERE removed_at IS NULL;
