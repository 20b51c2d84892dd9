-- Retention (`dispatchctl archive`): the audit chain's oldest part moves to an archive file.
-- The chain is split as a prefix and a suffix, never with holes, and this row says where
-- the split is: the id and hash of the last event that is NOT in this file. In the live
-- database it is the newest archived event (its first remaining event chains to this hash);
-- in an archive file begun after an earlier archive, the event that archive ends with.
-- No row: the chain starts in this file, at the genesis hash. Only the hash is kept, so the
-- anchor holds whatever the chain commits to, however an event's hash is computed.
CREATE TABLE audit_anchor (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  last_id    INTEGER NOT NULL,  -- audit id of the last event before this file's first
  last_hash  TEXT NOT NULL,     -- that event's hash
  updated_at TEXT NOT NULL
);

-- Archiving deletes escalations, and with foreign keys on SQLite then looks for actions that
-- still point at each one (actions.escalation_id): without an index, a scan of every action
-- per escalation, inside the live write transaction.
CREATE INDEX actions_escalation ON actions (escalation_id);
