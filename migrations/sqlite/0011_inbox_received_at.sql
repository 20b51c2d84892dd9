-- Replay (dispatchctl replay, eval) pages through the inbox in received_at order, keyset by
-- (received_at, id): without this index each page scanned and sorted the whole inbox.
CREATE INDEX inbox_received_at ON inbox (received_at, id);
