-- dispatchd: foreign keys off during this migration
-- The reply window (docs/channels.md, "The reply window"): escalations.reason gains
--   window_closed, a send the channel refused because the counterpart's window for
--   free-form messages had closed (WhatsApp's 24 hours); its proposed action is the reply
--   that could not be sent. SQLite cannot change a CHECK constraint: the table is rebuilt
--   as in 0023, same rows and ids, its indexes, triggers and view made again.
CREATE TABLE escalations_rebuilt (
  id                INTEGER PRIMARY KEY,
  message_id        INTEGER NOT NULL REFERENCES inbox (id),
  reason            TEXT NOT NULL CHECK (reason IN ('contract_failed', 'model_escalated', 'needs_approval',
                    'review_flags', 'policy_violation', 'provider_unavailable', 'send_failed',
                    'delivery_unknown', 'undecodable', 'tool_failed', 'conversation_limit', 'suspected_loop',
                    'budget_exhausted', 'window_closed')),
  detail            TEXT,
  status            TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'claimed', 'resolved', 'dismissed')),
  proposed_action   TEXT,
  assignee          TEXT,
  resolution        TEXT,
  created_at        TEXT NOT NULL,
  claimed_at        TEXT,
  resolved_at       TEXT,
  breach_noticed_at TEXT
);
INSERT INTO escalations_rebuilt (id, message_id, reason, detail, status, proposed_action, assignee, resolution,
                                 created_at, claimed_at, resolved_at, breach_noticed_at)
  SELECT id, message_id, reason, detail, status, proposed_action, assignee, resolution, created_at, claimed_at,
         resolved_at, breach_noticed_at
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
CREATE TRIGGER conversation_holds_release AFTER UPDATE OF status ON escalations
  WHEN NEW.status IN ('resolved', 'dismissed') BEGIN
  DELETE FROM conversation_holds WHERE escalation_id = NEW.id;
END;
CREATE VIEW v_escalations AS
  SELECT id AS escalation_id, message_id, reason, detail, status, proposed_action, assignee, resolution,
         created_at, claimed_at, resolved_at, breach_noticed_at
  FROM escalations;
