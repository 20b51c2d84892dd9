-- PostgreSQL twin of ../sqlite/0028_response_targets.sql (its comments say what the column holds).
ALTER TABLE escalations ADD COLUMN breach_noticed_at TEXT;
CREATE OR REPLACE VIEW v_escalations AS
  SELECT id AS escalation_id, message_id, reason, detail, status, proposed_action, assignee, resolution,
         created_at, claimed_at, resolved_at, breach_noticed_at
  FROM escalations;
