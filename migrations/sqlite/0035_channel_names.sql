-- dispatchd: foreign keys off during this migration
-- Channels are plug-ins (docs/architecture.md, "How to add a channel"): inbox.channel and
--   poll_cursors.channel hold the name of a registered channel (whatsapp, gmail, and any
--   channel added later, such as an IMAP/SMTP mailbox), and the store no longer lists them:
--   the CHECK (channel IN ('whatsapp', 'gmail')) of 0001 and 0005 goes. The column stays
--   NOT NULL, the inbox stays unique on (channel, provider_message_id), and the other
--   columns keep their CHECKs. SQLite cannot drop a CHECK constraint: both tables are
--   rebuilt as in 0034, same columns, rows and ids (attempts, actions, escalations, audit and
--   the others point at inbox rows by id throughout), and the indexes, triggers and views
--   over the inbox made again as they stood after 0034. The audit trail is not touched.
CREATE TABLE inbox_rebuilt (
  id                  INTEGER PRIMARY KEY,
  channel             TEXT NOT NULL,
  provider_message_id TEXT NOT NULL,
  conversation_id     TEXT NOT NULL,
  sender              TEXT NOT NULL,
  received_at         TEXT NOT NULL,
  text                TEXT NOT NULL,
  raw_payload         TEXT NOT NULL,
  state               TEXT NOT NULL DEFAULT 'received'
                      CHECK (state IN ('received', 'processing', 'decided', 'done')),
  lease_owner         TEXT,
  lease_expires_at    TEXT,
  outcome             TEXT NOT NULL DEFAULT 'pending'
                      CHECK (outcome IN ('pending', 'replied', 'escalated', 'ignored')),
  message_type        TEXT,
  raw_encoding        TEXT CHECK (raw_encoding IN ('base64')),
  arrived_ms          INTEGER NOT NULL DEFAULT 0,
  turn_id             INTEGER,
  UNIQUE (channel, provider_message_id)
);
INSERT INTO inbox_rebuilt (id, channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload,
                           state, lease_owner, lease_expires_at, outcome, message_type, raw_encoding, arrived_ms,
                           turn_id)
  SELECT id, channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload, state,
         lease_owner, lease_expires_at, outcome, message_type, raw_encoding, arrived_ms, turn_id
  FROM inbox ORDER BY id;
-- The views and the trigger that read the inbox go first: renaming a table has SQLite check
-- every view and trigger, and these would name a table that is gone.
DROP VIEW v_messages;
DROP VIEW v_actions;
DROP VIEW v_tool_calls;
DROP TRIGGER spend_insert;
DROP TABLE inbox;
ALTER TABLE inbox_rebuilt RENAME TO inbox;
CREATE INDEX inbox_conversation ON inbox (conversation_id, id);
CREATE INDEX inbox_state ON inbox (state, lease_expires_at);
CREATE INDEX inbox_sender ON inbox (channel, sender, received_at);
CREATE INDEX inbox_ready ON inbox (state, id);
CREATE INDEX inbox_received_at ON inbox (received_at, id);
CREATE INDEX inbox_unfinished ON inbox (conversation_id, id) WHERE state IN ('received', 'processing');
CREATE INDEX inbox_turn ON inbox (turn_id) WHERE turn_id IS NOT NULL;
CREATE INDEX inbox_arrived ON inbox (arrived_ms, id) WHERE state = 'received';
CREATE TRIGGER metric_inbox_insert AFTER INSERT ON inbox BEGIN
  INSERT INTO metric_counts (metric, label1, label2, n) SELECT 'messages', NEW.channel, NEW.outcome, 1 WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER metric_inbox_outcome AFTER UPDATE OF outcome ON inbox WHEN OLD.outcome IS NOT NEW.outcome BEGIN
  UPDATE metric_counts SET n = n - 1 WHERE metric = 'messages' AND label1 = OLD.channel AND label2 = OLD.outcome;
  INSERT INTO metric_counts (metric, label1, label2, n) SELECT 'messages', NEW.channel, NEW.outcome, 1 WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER spend_insert AFTER INSERT ON attempts BEGIN
  INSERT INTO spend_days (day, shard, cost_usd, priced, unpriced)
    SELECT substr(NEW.created_at, 1, 10), 0, coalesce(NEW.cost_usd, 0), NEW.cost_usd IS NOT NULL,
           NEW.cost_usd IS NULL WHERE true
    ON CONFLICT DO UPDATE SET cost_usd = cost_usd + excluded.cost_usd, priced = priced + excluded.priced,
      unpriced = unpriced + excluded.unpriced;
  INSERT INTO spend_conversation_days (conversation_id, day, cost_usd, priced, unpriced)
    SELECT i.conversation_id, substr(NEW.created_at, 1, 10), coalesce(NEW.cost_usd, 0), NEW.cost_usd IS NOT NULL,
           NEW.cost_usd IS NULL FROM inbox i WHERE i.id = NEW.message_id
    ON CONFLICT DO UPDATE SET cost_usd = cost_usd + excluded.cost_usd, priced = priced + excluded.priced,
      unpriced = unpriced + excluded.unpriced;
END;
CREATE VIEW v_messages AS
  SELECT id AS message_id, channel, provider_message_id, conversation_id, sender, received_at, text, state, outcome,
         message_type,
         (SELECT CASE WHEN count(*) = count(a.cost_usd) THEN coalesce(sum(a.cost_usd), 0) END
          FROM attempts a WHERE a.message_id = inbox.id) AS cost_usd,
         coalesce(turn_id, id) AS turn_id,
         (SELECT p.category FROM send_pricing p WHERE p.message_id = inbox.id
          ORDER BY p.action_id DESC LIMIT 1) AS send_category,
         (SELECT max(p.billable) FROM send_pricing p WHERE p.message_id = inbox.id) AS send_billable,
         (SELECT CASE WHEN count(*) = count(p.cost) THEN sum(p.cost) END
          FROM send_pricing p WHERE p.message_id = inbox.id) AS send_cost,
         (SELECT max(p.currency) FROM send_pricing p WHERE p.message_id = inbox.id) AS send_currency
  FROM inbox;
CREATE VIEW v_actions AS
  SELECT a.id AS action_id, a.message_id, m.channel, a.escalation_id, a.action, a.arguments, a.recipient, a.body,
         a.status, a.created_by, a.idempotency_key, a.provider_message_id, a.error, a.created_at, a.updated_at,
         a.tool_server, a.tool_name, a.follow_up, a.interactive, a.template_message
  FROM actions a JOIN inbox m ON m.id = a.message_id;
CREATE VIEW v_tool_calls AS
  SELECT t.id AS tool_call_id, t.message_id, m.channel, t.attempt, t.action, t.kind, t.server, t.tool, t.outcome,
         t.duration_ms, t.result_bytes, t.created_at, t.action_id
  FROM tool_calls t JOIN inbox m ON m.id = t.message_id;

-- Nothing points at poll_cursors and nothing reads it in the schema: the table alone.
CREATE TABLE poll_cursors_rebuilt (
  channel    TEXT NOT NULL,
  mailbox    TEXT NOT NULL,  -- the account polled, e.g. the Gmail address
  cursor     TEXT NOT NULL,  -- the channel's position in the mailbox (Gmail: a historyId)
  started_at TEXT NOT NULL,  -- the first start: older mail is answered only within the backfill window
  updated_at TEXT NOT NULL,
  PRIMARY KEY (channel, mailbox)
);
INSERT INTO poll_cursors_rebuilt (channel, mailbox, cursor, started_at, updated_at)
  SELECT channel, mailbox, cursor, started_at, updated_at FROM poll_cursors;
DROP TABLE poll_cursors;
ALTER TABLE poll_cursors_rebuilt RENAME TO poll_cursors;
