-- Counters for /metrics kept as the rows change. A scrape used to run full-table aggregates
-- (2.9 s at a million messages, with the event loop waiting); now triggers keep one row per
-- metric and label set, and a scrape reads these few rows. Rows are never deleted, so no
-- DELETE triggers: a count only moves when a row is inserted or changes state.
-- The counts are filled once from the existing rows here (a one-time scan at upgrade).
--
-- PostgreSQL twin of ../sqlite/0008_metric_counts.sql. Where it differs, and why:
--   - plain tables with their primary key (WITHOUT ROWID is SQLite's storage choice)
--   - each trigger runs a plpgsql function of its own name (PostgreSQL triggers run a
--     function, not a statement list); the same conditions move into the triggers' WHEN
--     with IS DISTINCT FROM for SQLite's IS NOT, and the upserts name their conflict target
--     (PostgreSQL requires it for DO UPDATE; SQLite's "WHERE true" is not needed)
--   - sum(latency_ms) is numeric on PostgreSQL: stored as BIGINT, as SQLite stores it
--   - several instances write these rows concurrently: an upsert waits for the row's lock
--     (one hot row per label set), it never loses a count

-- metric: 'messages' (label1 channel, label2 outcome), 'attempts' (verdict, error_class or
-- ''), 'reasks' (none), 'escalations' (reason, status), 'actions' (status, '').
CREATE TABLE metric_counts (
  metric TEXT NOT NULL,
  label1 TEXT NOT NULL DEFAULT '',
  label2 TEXT NOT NULL DEFAULT '',
  n      BIGINT NOT NULL,
  PRIMARY KEY (metric, label1, label2)
);

-- The model latency histogram per provider and model: bucket i counts attempts with
-- latency_ms <= the i-th bound of store::k_latency_buckets_ms and above the one before;
-- bucket 9 is above the last bound (+Inf).
CREATE TABLE metric_latency (
  provider TEXT NOT NULL,
  model    TEXT NOT NULL,
  bucket   BIGINT NOT NULL,
  n        BIGINT NOT NULL,
  sum_ms   BIGINT NOT NULL,
  PRIMARY KEY (provider, model, bucket)
);

INSERT INTO metric_counts (metric, label1, label2, n)
  SELECT 'messages', channel, outcome, count(*) FROM inbox GROUP BY channel, outcome;
INSERT INTO metric_counts (metric, label1, label2, n)
  SELECT 'attempts', verdict, coalesce(error_class, ''), count(*) FROM attempts GROUP BY 2, 3;
INSERT INTO metric_counts (metric, label1, label2, n)
  SELECT 'reasks', '', '', count(*) FROM attempts WHERE attempt > 1;
INSERT INTO metric_counts (metric, label1, label2, n)
  SELECT 'escalations', reason, status, count(*) FROM escalations GROUP BY reason, status;
INSERT INTO metric_counts (metric, label1, label2, n)
  SELECT 'actions', status, '', count(*) FROM actions GROUP BY status;
INSERT INTO metric_latency (provider, model, bucket, n, sum_ms)
  SELECT provider, model,
         CASE WHEN latency_ms <= 100 THEN 0 WHEN latency_ms <= 250 THEN 1 WHEN latency_ms <= 500 THEN 2
              WHEN latency_ms <= 1000 THEN 3 WHEN latency_ms <= 2500 THEN 4 WHEN latency_ms <= 5000 THEN 5
              WHEN latency_ms <= 10000 THEN 6 WHEN latency_ms <= 30000 THEN 7 WHEN latency_ms <= 60000 THEN 8
              ELSE 9 END,
         count(*), CAST(sum(latency_ms) AS BIGINT)
  FROM attempts WHERE latency_ms IS NOT NULL GROUP BY 1, 2, 3;

-- One count up for (metric, label1, label2), the row made at 1 when it is the first.
CREATE FUNCTION metric_count_up(p_metric TEXT, p_label1 TEXT, p_label2 TEXT) RETURNS void LANGUAGE sql AS $$
  INSERT INTO metric_counts AS c (metric, label1, label2, n) VALUES (p_metric, p_label1, p_label2, 1)
    ON CONFLICT (metric, label1, label2) DO UPDATE SET n = c.n + 1;
$$;

CREATE FUNCTION metric_inbox_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM metric_count_up('messages', NEW.channel, NEW.outcome);
  RETURN NULL;
END
$$;
CREATE TRIGGER metric_inbox_insert AFTER INSERT ON inbox FOR EACH ROW EXECUTE FUNCTION metric_inbox_insert();

CREATE FUNCTION metric_inbox_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE metric_counts SET n = n - 1 WHERE metric = 'messages' AND label1 = OLD.channel AND label2 = OLD.outcome;
  PERFORM metric_count_up('messages', NEW.channel, NEW.outcome);
  RETURN NULL;
END
$$;
CREATE TRIGGER metric_inbox_outcome AFTER UPDATE OF outcome ON inbox
  FOR EACH ROW WHEN (OLD.outcome IS DISTINCT FROM NEW.outcome) EXECUTE FUNCTION metric_inbox_outcome();

CREATE FUNCTION metric_attempts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM metric_count_up('attempts', NEW.verdict, coalesce(NEW.error_class, ''));
  IF NEW.attempt > 1 THEN
    PERFORM metric_count_up('reasks', '', '');
  END IF;
  IF NEW.latency_ms IS NOT NULL THEN
    INSERT INTO metric_latency AS l (provider, model, bucket, n, sum_ms)
      VALUES (NEW.provider, NEW.model,
              CASE WHEN NEW.latency_ms <= 100 THEN 0 WHEN NEW.latency_ms <= 250 THEN 1 WHEN NEW.latency_ms <= 500 THEN 2
                   WHEN NEW.latency_ms <= 1000 THEN 3 WHEN NEW.latency_ms <= 2500 THEN 4
                   WHEN NEW.latency_ms <= 5000 THEN 5 WHEN NEW.latency_ms <= 10000 THEN 6
                   WHEN NEW.latency_ms <= 30000 THEN 7 WHEN NEW.latency_ms <= 60000 THEN 8 ELSE 9 END,
              1, NEW.latency_ms)
      ON CONFLICT (provider, model, bucket) DO UPDATE SET n = l.n + 1, sum_ms = l.sum_ms + excluded.sum_ms;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER metric_attempts_insert AFTER INSERT ON attempts FOR EACH ROW EXECUTE FUNCTION metric_attempts_insert();
-- The counted columns of an attempt (verdict, error_class, attempt, provider, model,
-- latency_ms) are written once, with the row: no UPDATE trigger.

CREATE FUNCTION metric_escalations_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM metric_count_up('escalations', NEW.reason, NEW.status);
  RETURN NULL;
END
$$;
CREATE TRIGGER metric_escalations_insert AFTER INSERT ON escalations
  FOR EACH ROW EXECUTE FUNCTION metric_escalations_insert();

CREATE FUNCTION metric_escalations_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE metric_counts SET n = n - 1 WHERE metric = 'escalations' AND label1 = OLD.reason AND label2 = OLD.status;
  PERFORM metric_count_up('escalations', NEW.reason, NEW.status);
  RETURN NULL;
END
$$;
CREATE TRIGGER metric_escalations_status AFTER UPDATE OF status, reason ON escalations
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.reason IS DISTINCT FROM NEW.reason)
  EXECUTE FUNCTION metric_escalations_status();

CREATE FUNCTION metric_actions_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM metric_count_up('actions', NEW.status, '');
  RETURN NULL;
END
$$;
CREATE TRIGGER metric_actions_insert AFTER INSERT ON actions FOR EACH ROW EXECUTE FUNCTION metric_actions_insert();

CREATE FUNCTION metric_actions_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE metric_counts SET n = n - 1 WHERE metric = 'actions' AND label1 = OLD.status;
  PERFORM metric_count_up('actions', NEW.status, '');
  RETURN NULL;
END
$$;
CREATE TRIGGER metric_actions_status AFTER UPDATE OF status ON actions
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION metric_actions_status();
