-- PostgreSQL twin of ../sqlite/0031_action_choices.sql (its comments say what the column holds).
ALTER TABLE actions ADD COLUMN interactive TEXT;
-- v_actions gains the column at its end.
DROP VIEW v_actions;
CREATE VIEW v_actions AS
  SELECT a.id AS action_id, a.message_id, m.channel, a.escalation_id, a.action, a.arguments, a.recipient, a.body,
         a.status, a.created_by, a.idempotency_key, a.provider_message_id, a.error, a.created_at, a.updated_at,
         a.tool_server, a.tool_name, a.follow_up, a.interactive
  FROM actions a JOIN inbox m ON m.id = a.message_id;
