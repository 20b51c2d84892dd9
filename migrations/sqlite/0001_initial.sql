-- dispatchd schema, version 1. Forward-only: never edit this file once released; add a
-- new numbered file instead (dispatchctl migrate refuses a changed checksum).
-- Timestamps are ISO 8601 UTC text; JSON columns hold compact JSON text.

-- Inbound messages. Unique on (channel, provider_message_id): a redelivered webhook or a
-- message seen twice by history polling is stored once.
CREATE TABLE inbox (
  id                  INTEGER PRIMARY KEY,
  channel             TEXT NOT NULL CHECK (channel IN ('whatsapp', 'gmail')),
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
  UNIQUE (channel, provider_message_id)
);
CREATE INDEX inbox_conversation ON inbox (conversation_id, id);
CREATE INDEX inbox_state ON inbox (state, lease_expires_at);
CREATE INDEX inbox_sender ON inbox (channel, sender, received_at);

-- One row per model attempt for a message; attempts recorded before a crash count toward
-- the re-ask budget.
CREATE TABLE attempts (
  id              INTEGER PRIMARY KEY,
  message_id      INTEGER NOT NULL REFERENCES inbox (id),
  attempt         INTEGER NOT NULL CHECK (attempt >= 1),
  provider        TEXT NOT NULL,
  model           TEXT NOT NULL,
  request_summary TEXT,
  raw_output      TEXT,
  verdict         TEXT NOT NULL CHECK (verdict IN ('valid', 'review', 'invalid', 'error')),
  errors          TEXT NOT NULL DEFAULT '[]',
  error_class     TEXT,
  latency_ms      INTEGER,
  input_tokens    INTEGER,
  output_tokens   INTEGER,
  finish_reason   TEXT,
  created_at      TEXT NOT NULL,
  UNIQUE (message_id, attempt)
);

-- Executed or proposed actions; the outbox. A send is marked 'sending' in a committed
-- transaction before the provider call, so a crash leaves 'sending' (outcome unknown),
-- never a silent retry. The sender reads recipient and body, not the catalog-specific
-- arguments, so a staff reply and a model reply leave the same way. A proposal that staff
-- replaced or dismissed ends 'rejected'.
CREATE TABLE actions (
  id                  INTEGER PRIMARY KEY,
  message_id          INTEGER NOT NULL REFERENCES inbox (id),
  escalation_id       INTEGER REFERENCES escalations (id),
  action              TEXT NOT NULL,
  arguments           TEXT NOT NULL,
  recipient           TEXT,
  body                TEXT,
  status              TEXT NOT NULL
                      CHECK (status IN ('proposed', 'approved', 'sending', 'sent', 'failed', 'unknown', 'rejected')),
  created_by          TEXT NOT NULL,
  idempotency_key     TEXT NOT NULL UNIQUE,
  provider_message_id TEXT,
  error               TEXT,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL
);
CREATE INDEX actions_status ON actions (status, id);
CREATE INDEX actions_recipient ON actions (recipient);

-- The human queue.
CREATE TABLE escalations (
  id              INTEGER PRIMARY KEY,
  message_id      INTEGER NOT NULL REFERENCES inbox (id),
  reason          TEXT NOT NULL CHECK (reason IN ('contract_failed', 'model_escalated', 'needs_approval',
                  'review_flags', 'policy_violation', 'provider_unavailable', 'send_failed',
                  'delivery_unknown', 'undecodable')),
  detail          TEXT,
  status          TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'claimed', 'resolved', 'dismissed')),
  proposed_action TEXT,
  assignee        TEXT,
  resolution      TEXT,
  created_at      TEXT NOT NULL,
  claimed_at      TEXT,
  resolved_at     TEXT
);
CREATE INDEX escalations_status ON escalations (status, created_at);

-- Append-only audit trail; hash = sha256(prev_hash || canonical event), computed by the
-- store in the same transaction as the change it describes.
CREATE TABLE audit (
  id         INTEGER PRIMARY KEY,
  at         TEXT NOT NULL,
  event      TEXT NOT NULL,
  message_id INTEGER REFERENCES inbox (id),
  actor      TEXT NOT NULL,
  detail     TEXT NOT NULL,
  prev_hash  TEXT NOT NULL,
  hash       TEXT NOT NULL UNIQUE
);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;

-- The documented views: the stable surface staff and auditors query.
CREATE VIEW v_messages AS
  SELECT id AS message_id, channel, provider_message_id, conversation_id, sender, received_at, text, state, outcome
  FROM inbox;

CREATE VIEW v_attempts AS
  SELECT id AS attempt_id, message_id, attempt, provider, model, raw_output, verdict, errors, error_class,
         latency_ms, input_tokens, output_tokens, finish_reason, created_at
  FROM attempts;

CREATE VIEW v_actions AS
  SELECT a.id AS action_id, a.message_id, m.channel, a.escalation_id, a.action, a.arguments, a.recipient, a.body,
         a.status, a.created_by, a.idempotency_key, a.provider_message_id, a.error, a.created_at, a.updated_at
  FROM actions a JOIN inbox m ON m.id = a.message_id;

CREATE VIEW v_escalations AS
  SELECT id AS escalation_id, message_id, reason, detail, status, proposed_action, assignee, resolution,
         created_at, claimed_at, resolved_at
  FROM escalations;

CREATE VIEW v_audit AS
  SELECT id AS audit_id, at, event, message_id, actor, detail, prev_hash, hash
  FROM audit ORDER BY id;
