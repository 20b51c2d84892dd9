-- Turns: the messages of one conversation answered by one decision (agent.burst_quiet_ms).
--   arrived_ms  when the message reached dispatchd, in milliseconds since 1970 (received_at
--               keeps whole seconds, the store's one text format); bursts are timed by it.
--               Rows stored before this migration have 0: long ago, never waited for.
--   turn_id     the message whose decision answers this one (the turn's first message, on
--               every message of a turn of several, itself included); NULL for a message
--               answered on its own. No foreign key: the archive moves a turn's messages in
--               whatever batches the audit chain gives.
ALTER TABLE inbox ADD COLUMN arrived_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE inbox ADD COLUMN turn_id INTEGER;
CREATE INDEX inbox_turn ON inbox (turn_id) WHERE turn_id IS NOT NULL;
-- The take with bursts walks the unanswered messages oldest arrival first and stops at the
-- first one whose conversation is quiet: the messages still inside their quiet time are
-- never read. Only received rows are in it, a handful at any time.
CREATE INDEX inbox_arrived ON inbox (arrived_ms, id) WHERE state = 'received';

DROP VIEW v_messages;
CREATE VIEW v_messages AS
  SELECT id AS message_id, channel, provider_message_id, conversation_id, sender, received_at, text, state, outcome,
         message_type,
         (SELECT CASE WHEN count(*) = count(a.cost_usd) THEN coalesce(sum(a.cost_usd), 0) END
          FROM attempts a WHERE a.message_id = inbox.id) AS cost_usd,
         coalesce(turn_id, id) AS turn_id
  FROM inbox;
