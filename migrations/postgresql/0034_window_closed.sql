-- PostgreSQL twin of ../sqlite/0034_window_closed.sql (its comments say what changes): the
-- reason's CHECK constraint is replaced in place.
ALTER TABLE escalations DROP CONSTRAINT escalations_reason_check;
ALTER TABLE escalations ADD CONSTRAINT escalations_reason_check CHECK (reason IN ('contract_failed', 'model_escalated',
  'needs_approval', 'review_flags', 'policy_violation', 'provider_unavailable', 'send_failed', 'delivery_unknown',
  'undecodable', 'tool_failed', 'conversation_limit', 'suspected_loop', 'budget_exhausted', 'window_closed'));
