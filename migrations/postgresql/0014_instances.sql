-- Several dispatchd instances on one database (ARCHITECTURE.md, "Scale-out path";
-- store/instances.h). Each instance writes a heartbeat row; one whose heartbeat is older
-- than cluster.dead_after_s is taken over by a live one: its sends in flight become
-- delivery_unknown and its inbox leases are released.
--
-- PostgreSQL twin of ../sqlite/0014_instances.sql: the same table and column. Nothing else
-- differs; the locks that keep several instances apart (FOR UPDATE SKIP LOCKED, advisory
-- locks) are in the store's statements, not in the schema.
CREATE TABLE instances (
  id            TEXT PRIMARY KEY,  -- instance.id (default: host name + listen port)
  started_at    TEXT NOT NULL,     -- its current run's start
  heartbeat_at  TEXT NOT NULL,     -- its newest heartbeat
  taken_over_at TEXT,              -- when another instance took its work; NULL while it is
                                   -- alive (a restart clears it)
  taken_over_by TEXT               -- the instance that did
);

-- The instance that moved an action to 'sending' (store::begin_send), so that a takeover
-- makes unknown only the sends of the instance that died. NULL: claimed by a run that
-- named no instance (one machine), left to recover_sending at start as before.
ALTER TABLE actions ADD COLUMN claimed_by TEXT;
