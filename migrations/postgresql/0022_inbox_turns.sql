-- PostgreSQL twin of ../sqlite/0022_inbox_turns.sql (its comments say what the columns
-- mean); arrived_ms is a BIGINT, v_messages' cost keeps its cast.
ALTER TABLE inbox ADD COLUMN arrived_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE inbox ADD COLUMN turn_id BIGINT;
CREATE INDEX inbox_turn ON inbox (turn_id) WHERE turn_id IS NOT NULL;
CREATE INDEX inbox_arrived ON inbox (arrived_ms, id) WHERE state = 'received';

DROP VIEW v_messages;
CREATE VIEW v_messages AS
  SELECT id AS message_id, channel, provider_message_id, conversation_id, sender, received_at, text, state, outcome,
         message_type,
         (SELECT CAST(CASE WHEN count(*) = count(a.cost_usd) THEN coalesce(sum(a.cost_usd), 0) END AS DOUBLE PRECISION)
          FROM attempts a WHERE a.message_id = inbox.id) AS cost_usd,
         coalesce(turn_id, id) AS turn_id
  FROM inbox;
