-- PostgreSQL twin of ../sqlite/0032_action_templates.sql (its comments say what the column holds).
ALTER TABLE actions ADD COLUMN template_message TEXT;
-- v_actions gains the column at its end.
DROP VIEW v_actions;
CREATE VIEW v_actions AS
  SELECT a.id AS action_id, a.message_id, m.channel, a.escalation_id, a.action, a.arguments, a.recipient, a.body,
         a.status, a.created_by, a.idempotency_key, a.provider_message_id, a.error, a.created_at, a.updated_at,
         a.tool_server, a.tool_name, a.follow_up, a.interactive, a.template_message
  FROM actions a JOIN inbox m ON m.id = a.message_id;
