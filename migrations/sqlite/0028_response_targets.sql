-- Response-time targets (docs/staff.md, "Response-time targets"): when dispatchd noticed that
-- an open escalation passed its due time (created_at + staff.response_target_minutes of its
-- reason). Set once, by the instance whose conditional UPDATE (breach_noticed_at IS NULL)
-- changed the row, in the transaction that appends the audit event escalation_breached: the
-- notifier's feed (store/notify.h), so each case's breach is notified once, across restarts
-- and instances. NULL: no breach noticed (met, not yet due, or older than this migration).
ALTER TABLE escalations ADD COLUMN breach_noticed_at TEXT;
-- v_escalations gains the column at its end.
DROP VIEW v_escalations;
CREATE VIEW v_escalations AS
  SELECT id AS escalation_id, message_id, reason, detail, status, proposed_action, assignee, resolution,
         created_at, claimed_at, resolved_at, breach_noticed_at
  FROM escalations;
