-- Interactive replies (docs/catalog.md, "Interactive fields"): the choices a reply action
-- sends with its text, as the validator checked them, in common/interactive.h's stored form
-- ({"type":"button","buttons":[...]} or {"type":"list","button":...,"sections":[...]}).
-- Kept on the row, not looked up in the catalog at send time, so that what leaves is what
-- was decided even when the catalog is reloaded in between. NULL: a plain text (every row
-- older than this migration).
ALTER TABLE actions ADD COLUMN interactive TEXT;
-- v_actions gains the column at its end.
DROP VIEW v_actions;
CREATE VIEW v_actions AS
  SELECT a.id AS action_id, a.message_id, m.channel, a.escalation_id, a.action, a.arguments, a.recipient, a.body,
         a.status, a.created_by, a.idempotency_key, a.provider_message_id, a.error, a.created_at, a.updated_at,
         a.tool_server, a.tool_name, a.follow_up, a.interactive
  FROM actions a JOIN inbox m ON m.id = a.message_id;
