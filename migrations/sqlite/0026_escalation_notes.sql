-- Staff's internal notes on an escalation (docs/staff.md, "Notes"): what one person tells
-- the next about a case. A note is never sent to the customer: nothing here reaches the
-- outbox. Each note is also in the audit trail (event staff_note, its text in the detail),
-- appended in the same transaction.
--   message_id   the escalation's message, so that retention moves a case's notes with its
--                other rows and dispatchctl erase finds them
-- Hand-overs (release, take-over, reassignment) need no column: escalations.claimed_at is
-- the holder's last activity on the case (set by a claim, a take-over or a reassignment,
-- moved by the holder's claim again or note), and each hand-over is an audit event.
CREATE TABLE escalation_notes (
  id            INTEGER PRIMARY KEY,
  escalation_id INTEGER NOT NULL REFERENCES escalations (id),
  message_id    INTEGER NOT NULL REFERENCES inbox (id),
  author        TEXT NOT NULL,
  text          TEXT NOT NULL,
  created_at    TEXT NOT NULL
);
CREATE INDEX escalation_notes_escalation ON escalation_notes (escalation_id);
CREATE INDEX escalation_notes_message ON escalation_notes (message_id);

CREATE VIEW v_notes AS
  SELECT id AS note_id, escalation_id, message_id, author, text, created_at
  FROM escalation_notes;
