-- Replay (dispatchctl replay, eval) pages through the inbox in received_at order, keyset by
-- (received_at, id): without this index each page scanned and sorted the whole inbox.
-- PostgreSQL twin of ../sqlite/0011_inbox_received_at.sql: the same statement.
CREATE INDEX inbox_received_at ON inbox (received_at, id);
