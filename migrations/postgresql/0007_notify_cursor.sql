-- Where the escalation notifier (escalation.notify_url) stands in the audit trail: the id
-- of the last `escalation` audit event it has POSTed (or given up on). One row, written
-- the first time dispatchd starts with a notify_url: it then points at the newest audit
-- event, so escalations older than that first start are never notified (no flood of
-- history). The cursor moves after the receiver answered, so a crash between the answer
-- and the commit sends that notification again (at least once, never lost).
-- PostgreSQL twin of ../sqlite/0007_notify_cursor.sql: the one row's id is a plain BIGINT
-- (always 1, never generated), the audit id BIGINT.
CREATE TABLE notify_cursor (
  id            BIGINT PRIMARY KEY CHECK (id = 1),
  last_audit_id BIGINT NOT NULL,
  started_at    TEXT NOT NULL,  -- the first start with a notify_url
  updated_at    TEXT NOT NULL
);
