-- Catalog mcp actions with "use": "act": the tool call is the decision, made once through
-- the outbox as a send is (docs/mcp.md). Such an outbox row names its tool; the message it
-- answers may get a reply once the tool succeeded (follow_up, to `recipient`); a tool that
-- answers with an error opens a `tool_failed` escalation; a call whose outcome is unknown
-- (a crash or a timeout after it left) is `unknown` with a delivery_unknown escalation, as
-- a send is. Act calls are tool calls too: v_tool_calls names their outbox row.
--   actions.tool_server, tool_name   the tool; NULL for a message sent to the customer
--   actions.follow_up                 the reply queued once the tool succeeded; NULL for none
--   tool_calls.action_id              the outbox row of an act call; NULL for lookups
--
-- PostgreSQL twin of ../sqlite/0021_tool_actions.sql: the reason's CHECK constraint is
-- replaced in place (SQLite rebuilds the table).
ALTER TABLE actions ADD COLUMN tool_server TEXT;
ALTER TABLE actions ADD COLUMN tool_name TEXT;
ALTER TABLE actions ADD COLUMN follow_up TEXT;
ALTER TABLE tool_calls ADD COLUMN action_id BIGINT REFERENCES actions (id);

ALTER TABLE escalations DROP CONSTRAINT escalations_reason_check;
ALTER TABLE escalations ADD CONSTRAINT escalations_reason_check CHECK (reason IN ('contract_failed', 'model_escalated',
  'needs_approval', 'review_flags', 'policy_violation', 'provider_unavailable', 'send_failed', 'delivery_unknown',
  'undecodable', 'tool_failed'));

DROP VIEW v_actions;
CREATE VIEW v_actions AS
  SELECT a.id AS action_id, a.message_id, m.channel, a.escalation_id, a.action, a.arguments, a.recipient, a.body,
         a.status, a.created_by, a.idempotency_key, a.provider_message_id, a.error, a.created_at, a.updated_at,
         a.tool_server, a.tool_name, a.follow_up
  FROM actions a JOIN inbox m ON m.id = a.message_id;

DROP VIEW v_tool_calls;
CREATE VIEW v_tool_calls AS
  SELECT t.id AS tool_call_id, t.message_id, m.channel, t.attempt, t.action, t.kind, t.server, t.tool, t.outcome,
         t.duration_ms, t.result_bytes, t.created_at, t.action_id
  FROM tool_calls t JOIN inbox m ON m.id = t.message_id;
