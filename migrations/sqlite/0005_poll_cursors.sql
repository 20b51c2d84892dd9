-- Where a polling channel (Gmail) stands in its mailbox. The cursor moves in the same
-- transaction as the inbox rows it covers, so a crash between the two repeats a poll
-- (the inbox's uniqueness stores nothing twice) but never skips one.
CREATE TABLE poll_cursors (
  channel    TEXT NOT NULL CHECK (channel IN ('whatsapp', 'gmail')),
  mailbox    TEXT NOT NULL,  -- the account polled, e.g. the Gmail address
  cursor     TEXT NOT NULL,  -- Gmail: the historyId up to which messages are in the inbox
  started_at TEXT NOT NULL,  -- the first start: older mail is answered only within the backfill window
  updated_at TEXT NOT NULL,
  PRIMARY KEY (channel, mailbox)
);
