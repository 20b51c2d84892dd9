-- The model's spend per UTC day, for llm.budget (docs/agent.md, "The spend budget"): the
-- check before each model call reads one or two rows, whatever the size of the history.
-- Kept by a trigger on attempts, as metric_usage is (0010): an attempt counts on the day of
-- its created_at (UTC; the store's timestamps are UTC text, so the day is its first 10
-- characters). cost_usd sums the priced attempts only; `unpriced` counts the attempts whose
-- cost is unknown (NULL: no price for the model, no rate for a kind of token it used, no
-- usage reported), which are never added as 0.
--   spend_days               the whole deployment's spend per day, one row per shard as the
--                            /metrics counters have (0015: always shard 0 on SQLite, one per
--                            connection on PostgreSQL, where every attempt of every
--                            instance counts into it); a reader sums over shards
--   spend_conversation_days  per conversation (inbox.conversation_id of the attempt's
--                            message) per day; one turn at a time per conversation writes it,
--                            so it needs no shards. dispatchctl erase replaces a counterpart's
--                            conversation_id here as in the inbox (store/erase.h)
CREATE TABLE spend_days (
  day      TEXT NOT NULL,
  shard    INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  priced   INTEGER NOT NULL DEFAULT 0,
  unpriced INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (day, shard)
) WITHOUT ROWID;

CREATE TABLE spend_conversation_days (
  conversation_id TEXT NOT NULL,
  day             TEXT NOT NULL,
  cost_usd        REAL NOT NULL DEFAULT 0,
  priced          INTEGER NOT NULL DEFAULT 0,
  unpriced        INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (conversation_id, day)
) WITHOUT ROWID;

-- The existing attempts, once (a one-time scan at upgrade).
INSERT INTO spend_days (day, shard, cost_usd, priced, unpriced)
  SELECT substr(created_at, 1, 10), 0, coalesce(sum(cost_usd), 0), count(cost_usd), count(*) - count(cost_usd)
  FROM attempts GROUP BY 1;
INSERT INTO spend_conversation_days (conversation_id, day, cost_usd, priced, unpriced)
  SELECT i.conversation_id, substr(a.created_at, 1, 10), coalesce(sum(a.cost_usd), 0), count(a.cost_usd),
         count(*) - count(a.cost_usd)
  FROM attempts a JOIN inbox i ON i.id = a.message_id GROUP BY 1, 2;

CREATE TRIGGER spend_insert AFTER INSERT ON attempts BEGIN
  INSERT INTO spend_days (day, shard, cost_usd, priced, unpriced)
    SELECT substr(NEW.created_at, 1, 10), 0, coalesce(NEW.cost_usd, 0), NEW.cost_usd IS NOT NULL,
           NEW.cost_usd IS NULL WHERE true
    ON CONFLICT DO UPDATE SET cost_usd = cost_usd + excluded.cost_usd, priced = priced + excluded.priced,
      unpriced = unpriced + excluded.unpriced;
  INSERT INTO spend_conversation_days (conversation_id, day, cost_usd, priced, unpriced)
    SELECT i.conversation_id, substr(NEW.created_at, 1, 10), coalesce(NEW.cost_usd, 0), NEW.cost_usd IS NOT NULL,
           NEW.cost_usd IS NULL FROM inbox i WHERE i.id = NEW.message_id
    ON CONFLICT DO UPDATE SET cost_usd = cost_usd + excluded.cost_usd, priced = priced + excluded.priced,
      unpriced = unpriced + excluded.unpriced;
END;
-- The counted columns are written once, with the row: no UPDATE trigger (as in 0008).
