-- Named staff accounts and their sessions. The actor recorded for a decision taken over the
-- staff API is the account, never a name from the request. Tokens and session ids are
-- random (256 bits) and stored only as their SHA-256: a copy of the database gives no way
-- in. Revoking an account keeps its row (the audit trail names it) and deletes its sessions.
-- PostgreSQL twin of ../sqlite/0006_staff_accounts.sql; v_staff's count is cast to BIGINT
-- so that the column's type is written down rather than left to the engine.
CREATE TABLE staff_accounts (
  name       TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,  -- hex SHA-256 of the personal token
  created_at TEXT NOT NULL,
  revoked_at TEXT
);

CREATE TABLE staff_sessions (
  id_hash      TEXT PRIMARY KEY,  -- hex SHA-256 of the cookie's value
  name         TEXT NOT NULL REFERENCES staff_accounts (name) ON DELETE CASCADE,
  csrf         TEXT NOT NULL,     -- sent back in X-CSRF-Token on every POST/DELETE
  created_at   TEXT NOT NULL,     -- the absolute expiry counts from here
  last_seen_at TEXT NOT NULL      -- the idle expiry counts from here
);
CREATE INDEX staff_sessions_name ON staff_sessions (name);

CREATE VIEW v_staff AS
  SELECT name, created_at, revoked_at,
         CAST((SELECT count(*) FROM staff_sessions s WHERE s.name = a.name) AS BIGINT) AS sessions
  FROM staff_accounts a;
