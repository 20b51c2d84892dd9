-- PostgreSQL twin of ../sqlite/0023_runaway.sql (its comments say what changes): the
-- reason's CHECK constraint is replaced in place; the release trigger runs a function.
ALTER TABLE escalations DROP CONSTRAINT escalations_reason_check;
ALTER TABLE escalations ADD CONSTRAINT escalations_reason_check CHECK (reason IN ('contract_failed', 'model_escalated',
  'needs_approval', 'review_flags', 'policy_violation', 'provider_unavailable', 'send_failed', 'delivery_unknown',
  'undecodable', 'tool_failed', 'conversation_limit', 'suspected_loop', 'budget_exhausted'));

CREATE TABLE conversation_holds (
  conversation_id TEXT PRIMARY KEY,
  escalation_id   BIGINT NOT NULL REFERENCES escalations (id),
  reason          TEXT NOT NULL,
  since           TEXT NOT NULL
);
CREATE INDEX conversation_holds_escalation ON conversation_holds (escalation_id);
CREATE FUNCTION conversation_holds_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM conversation_holds WHERE escalation_id = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER conversation_holds_release AFTER UPDATE OF status ON escalations
  FOR EACH ROW WHEN (NEW.status IN ('resolved', 'dismissed')) EXECUTE FUNCTION conversation_holds_release();
