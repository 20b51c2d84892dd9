-- A template action's template (docs/catalog.md, "Template actions"): its name, language
-- and the value of each parameter, in common/template_send.h's stored form
-- ({"name","language","parameters":[{"part","button"?,"name","value"}]}). Kept on the row so
-- that what leaves is what was decided; the channel sends it instead of `body`, which holds
-- a one-line summary for people. NULL: a text (every row older than this migration).
ALTER TABLE actions ADD COLUMN template_message TEXT;
-- v_actions gains the column at its end.
DROP VIEW v_actions;
CREATE VIEW v_actions AS
  SELECT a.id AS action_id, a.message_id, m.channel, a.escalation_id, a.action, a.arguments, a.recipient, a.body,
         a.status, a.created_by, a.idempotency_key, a.provider_message_id, a.error, a.created_at, a.updated_at,
         a.tool_server, a.tool_name, a.follow_up, a.interactive, a.template_message
  FROM actions a JOIN inbox m ON m.id = a.message_id;
