-- PostgreSQL twin of ../sqlite/0025_spend.sql (its comments say what the tables hold).
-- Where it differs, and why:
--   - REAL is DOUBLE PRECISION, the counts BIGINT (as in 0010)
--   - spend_days counts into this connection's shard (metric_shard(), 0015): every attempt of
--     every instance writes the day's row, and one row would make their transactions wait
--     for each other's COMMIT
--   - priced / unpriced add 1 or 0 through CASE; the trigger runs a plpgsql function of its
--     name, its upserts name their conflict targets
CREATE TABLE spend_days (
  day      TEXT NOT NULL,
  shard    BIGINT NOT NULL DEFAULT 0,
  cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
  priced   BIGINT NOT NULL DEFAULT 0,
  unpriced BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (day, shard)
);

CREATE TABLE spend_conversation_days (
  conversation_id TEXT NOT NULL,
  day             TEXT NOT NULL,
  cost_usd        DOUBLE PRECISION NOT NULL DEFAULT 0,
  priced          BIGINT NOT NULL DEFAULT 0,
  unpriced        BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (conversation_id, day)
);

INSERT INTO spend_days (day, shard, cost_usd, priced, unpriced)
  SELECT substr(created_at, 1, 10), 0, coalesce(sum(cost_usd), 0), count(cost_usd), count(*) - count(cost_usd)
  FROM attempts GROUP BY 1;
INSERT INTO spend_conversation_days (conversation_id, day, cost_usd, priced, unpriced)
  SELECT i.conversation_id, substr(a.created_at, 1, 10), coalesce(sum(a.cost_usd), 0), count(a.cost_usd),
         count(*) - count(a.cost_usd)
  FROM attempts a JOIN inbox i ON i.id = a.message_id GROUP BY 1, 2;

CREATE FUNCTION spend_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO spend_days AS s (day, shard, cost_usd, priced, unpriced)
    VALUES (substr(NEW.created_at, 1, 10), metric_shard(), coalesce(NEW.cost_usd, 0),
            CASE WHEN NEW.cost_usd IS NOT NULL THEN 1 ELSE 0 END, CASE WHEN NEW.cost_usd IS NULL THEN 1 ELSE 0 END)
    ON CONFLICT (day, shard) DO UPDATE SET cost_usd = s.cost_usd + excluded.cost_usd,
      priced = s.priced + excluded.priced, unpriced = s.unpriced + excluded.unpriced;
  INSERT INTO spend_conversation_days AS s (conversation_id, day, cost_usd, priced, unpriced)
    SELECT i.conversation_id, substr(NEW.created_at, 1, 10), coalesce(NEW.cost_usd, 0),
           CASE WHEN NEW.cost_usd IS NOT NULL THEN 1 ELSE 0 END, CASE WHEN NEW.cost_usd IS NULL THEN 1 ELSE 0 END
    FROM inbox i WHERE i.id = NEW.message_id
    ON CONFLICT (conversation_id, day) DO UPDATE SET cost_usd = s.cost_usd + excluded.cost_usd,
      priced = s.priced + excluded.priced, unpriced = s.unpriced + excluded.unpriced;
  RETURN NULL;
END
$$;
CREATE TRIGGER spend_insert AFTER INSERT ON attempts FOR EACH ROW EXECUTE FUNCTION spend_insert();
