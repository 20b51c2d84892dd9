-- dispatchd: foreign keys off during this migration
-- Catalog mcp actions with "use": "act": the tool call is the decision, made once through
-- the outbox as a send is (docs/mcp.md). Such an outbox row names its tool; the message it
-- answers may get a reply once the tool succeeded (follow_up, to `recipient`); a tool that
-- answers with an error opens a `tool_failed` escalation; a call whose outcome is unknown
-- (a crash or a timeout after it left) is `unknown` with a delivery_unknown escalation, as
-- a send is. Act calls are tool calls too: v_tool_calls names their outbox row.
--   actions.tool_server, tool_name   the tool; NULL for a message sent to the customer
--   actions.follow_up                 the reply queued once the tool succeeded; NULL for none
--   tool_calls.action_id              the outbox row of an act call; NULL for lookups
ALTER TABLE actions ADD COLUMN tool_server TEXT;
ALTER TABLE actions ADD COLUMN tool_name TEXT;
ALTER TABLE actions ADD COLUMN follow_up TEXT;
ALTER TABLE tool_calls ADD COLUMN action_id INTEGER REFERENCES actions (id);

-- escalations.reason gains tool_failed. SQLite cannot change a CHECK constraint, so the
-- table is rebuilt with the same rows and ids; its indexes and triggers are made again
-- unchanged. The runner turns foreign keys off around this migration (the first line) and
-- checks them before it commits (store/migrations.cpp), as SQLite's documented procedure for
-- a table rebuild asks: actions.escalation_id points at the rows by id throughout.
CREATE TABLE escalations_rebuilt (
  id              INTEGER PRIMARY KEY,
  message_id      INTEGER NOT NULL REFERENCES inbox (id),
  reason          TEXT NOT NULL CHECK (reason IN ('contract_failed', 'model_escalated', 'needs_approval',
                  'review_flags', 'policy_violation', 'provider_unavailable', 'send_failed',
                  'delivery_unknown', 'undecodable', 'tool_failed')),
  detail          TEXT,
  status          TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'claimed', 'resolved', 'dismissed')),
  proposed_action TEXT,
  assignee        TEXT,
  resolution      TEXT,
  created_at      TEXT NOT NULL,
  claimed_at      TEXT,
  resolved_at     TEXT
);
INSERT INTO escalations_rebuilt (id, message_id, reason, detail, status, proposed_action, assignee, resolution,
                                 created_at, claimed_at, resolved_at)
  SELECT id, message_id, reason, detail, status, proposed_action, assignee, resolution, created_at, claimed_at,
         resolved_at
  FROM escalations ORDER BY id;
DROP VIEW v_escalations;
DROP TABLE escalations;
ALTER TABLE escalations_rebuilt RENAME TO escalations;
CREATE INDEX escalations_status ON escalations (status, created_at);
CREATE INDEX escalations_message ON escalations (message_id);
CREATE INDEX escalations_created ON escalations (created_at);
CREATE TRIGGER metric_escalations_insert AFTER INSERT ON escalations BEGIN
  INSERT INTO metric_counts (metric, label1, label2, n) SELECT 'escalations', NEW.reason, NEW.status, 1 WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER metric_escalations_status AFTER UPDATE OF status, reason ON escalations
  WHEN OLD.status IS NOT NEW.status OR OLD.reason IS NOT NEW.reason BEGIN
  UPDATE metric_counts SET n = n - 1 WHERE metric = 'escalations' AND label1 = OLD.reason AND label2 = OLD.status;
  INSERT INTO metric_counts (metric, label1, label2, n) SELECT 'escalations', NEW.reason, NEW.status, 1 WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE VIEW v_escalations AS
  SELECT id AS escalation_id, message_id, reason, detail, status, proposed_action, assignee, resolution,
         created_at, claimed_at, resolved_at
  FROM escalations;

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
