-- The type of each inbound message as its channel names it (WhatsApp: "text", "image",
-- "location", "reaction", ..., "unknown" for a type the binary does not know; NULL where a
-- channel has no types). The agent decides per type whether the model is asked at all
-- (connectors.whatsapp.message_types); auditors can ask which types ended how.
-- PostgreSQL twin of ../sqlite/0002_message_type.sql: the same statements.
ALTER TABLE inbox ADD COLUMN message_type TEXT;

DROP VIEW v_messages;
CREATE VIEW v_messages AS
  SELECT id AS message_id, channel, provider_message_id, conversation_id, sender, received_at, text, state, outcome,
         message_type
  FROM inbox;
