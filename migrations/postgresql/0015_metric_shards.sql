-- The /metrics counter rows, one per label set and connection shard (ARCHITECTURE.md,
-- "Scale-out path"). With one row per label set, every transaction that counted something
-- (most of them: an inbox insert, an attempt, an action's status) held that row's lock
-- until its COMMIT, so the writers of all instances waited for each other's COMMITs, and
-- two that took two hot rows (or a hot row and the audit tail) in opposite orders ended
-- as a deadlock, retried a second later. Now each server backend counts into the rows of
-- its own shard, pg_backend_pid() mod 1024: two connections share rows only when their
-- pids collide there, and then they merely wait as before. A count that moves down (a
-- status change) is a -1 in the mover's shard; a scrape sums over shards.
--
-- PostgreSQL twin of ../sqlite/0015_metric_shards.sql, which adds the same column (always
-- 0: SQLite has one writer) and keeps its triggers.
ALTER TABLE metric_counts ADD COLUMN shard BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_counts DROP CONSTRAINT metric_counts_pkey;
ALTER TABLE metric_counts ADD PRIMARY KEY (metric, label1, label2, shard);
ALTER TABLE metric_latency ADD COLUMN shard BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_latency DROP CONSTRAINT metric_latency_pkey;
ALTER TABLE metric_latency ADD PRIMARY KEY (provider, model, bucket, shard);
ALTER TABLE metric_usage ADD COLUMN shard BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_usage DROP CONSTRAINT metric_usage_pkey;
ALTER TABLE metric_usage ADD PRIMARY KEY (provider, model, shard);

CREATE FUNCTION metric_shard() RETURNS BIGINT LANGUAGE sql STABLE AS $$ SELECT pg_backend_pid() % 1024 $$;

-- `delta` (+1 or -1) on (metric, label1, label2) in this connection's shard.
CREATE FUNCTION metric_count_add(p_metric TEXT, p_label1 TEXT, p_label2 TEXT, delta BIGINT) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO metric_counts AS c (metric, label1, label2, shard, n)
    VALUES (p_metric, p_label1, p_label2, metric_shard(), delta)
    ON CONFLICT (metric, label1, label2, shard) DO UPDATE SET n = c.n + excluded.n;
$$;

CREATE OR REPLACE FUNCTION metric_count_up(p_metric TEXT, p_label1 TEXT, p_label2 TEXT) RETURNS void LANGUAGE sql AS $$
  SELECT metric_count_add(p_metric, p_label1, p_label2, 1);
$$;

CREATE OR REPLACE FUNCTION metric_inbox_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM metric_count_add('messages', OLD.channel, OLD.outcome, -1);
  PERFORM metric_count_up('messages', NEW.channel, NEW.outcome);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION metric_attempts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM metric_count_up('attempts', NEW.verdict, coalesce(NEW.error_class, ''));
  IF NEW.attempt > 1 THEN
    PERFORM metric_count_up('reasks', '', '');
  END IF;
  IF NEW.latency_ms IS NOT NULL THEN
    INSERT INTO metric_latency AS l (provider, model, bucket, shard, n, sum_ms)
      VALUES (NEW.provider, NEW.model,
              CASE WHEN NEW.latency_ms <= 100 THEN 0 WHEN NEW.latency_ms <= 250 THEN 1 WHEN NEW.latency_ms <= 500 THEN 2
                   WHEN NEW.latency_ms <= 1000 THEN 3 WHEN NEW.latency_ms <= 2500 THEN 4
                   WHEN NEW.latency_ms <= 5000 THEN 5 WHEN NEW.latency_ms <= 10000 THEN 6
                   WHEN NEW.latency_ms <= 30000 THEN 7 WHEN NEW.latency_ms <= 60000 THEN 8 ELSE 9 END,
              metric_shard(), 1, NEW.latency_ms)
      ON CONFLICT (provider, model, bucket, shard) DO UPDATE SET n = l.n + 1, sum_ms = l.sum_ms + excluded.sum_ms;
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION metric_escalations_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM metric_count_add('escalations', OLD.reason, OLD.status, -1);
  PERFORM metric_count_up('escalations', NEW.reason, NEW.status);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION metric_actions_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM metric_count_add('actions', OLD.status, '', -1);
  PERFORM metric_count_up('actions', NEW.status, '');
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION metric_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO metric_usage AS u (provider, model, shard, input_tokens, cached_input_tokens, cache_write_tokens,
                                 output_tokens, reasoning_tokens, cost_usd, priced, unpriced)
    VALUES (NEW.provider, NEW.model, metric_shard(), coalesce(NEW.input_tokens, 0),
            coalesce(NEW.cached_input_tokens, 0), coalesce(NEW.cache_write_tokens, 0), coalesce(NEW.output_tokens, 0),
            coalesce(NEW.reasoning_tokens, 0), coalesce(NEW.cost_usd, 0),
            CASE WHEN NEW.cost_usd IS NOT NULL THEN 1 ELSE 0 END, CASE WHEN NEW.cost_usd IS NULL THEN 1 ELSE 0 END)
    ON CONFLICT (provider, model, shard) DO UPDATE SET input_tokens = u.input_tokens + excluded.input_tokens,
      cached_input_tokens = u.cached_input_tokens + excluded.cached_input_tokens,
      cache_write_tokens = u.cache_write_tokens + excluded.cache_write_tokens,
      output_tokens = u.output_tokens + excluded.output_tokens,
      reasoning_tokens = u.reasoning_tokens + excluded.reasoning_tokens,
      cost_usd = u.cost_usd + excluded.cost_usd, priced = u.priced + excluded.priced,
      unpriced = u.unpriced + excluded.unpriced;
  RETURN NULL;
END
$$;
