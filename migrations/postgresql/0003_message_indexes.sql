-- Lookups by message: the outbox counts a message's actions on every insert, the views and
-- `dispatchctl audit --message` read a message's actions, escalations and audit events.
-- Without these each was a full scan, and the daemon slowed down as the tables grew.
-- PostgreSQL twin of ../sqlite/0003_message_indexes.sql: the same statements (PostgreSQL,
-- like SQLite, does not index a foreign key by itself).
CREATE INDEX actions_message ON actions (message_id);
CREATE INDEX escalations_message ON escalations (message_id);
CREATE INDEX audit_message ON audit (message_id);
-- The agent's next message: `received` rows in id order, without sorting the backlog.
CREATE INDEX inbox_ready ON inbox (state, id);
