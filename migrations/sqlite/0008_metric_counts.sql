-- Counters for /metrics kept as the rows change. A scrape used to run full-table aggregates
-- (2.9 s at a million messages, with the event loop waiting); now triggers keep one row per
-- metric and label set, and a scrape reads these few rows. Rows are never deleted, so no
-- DELETE triggers: a count only moves when a row is inserted or changes state.
-- The counts are filled once from the existing rows here (a one-time scan at upgrade).

-- metric: 'messages' (label1 channel, label2 outcome), 'attempts' (verdict, error_class or
-- ''), 'reasks' (none), 'escalations' (reason, status), 'actions' (status, '').
CREATE TABLE metric_counts (
  metric TEXT NOT NULL,
  label1 TEXT NOT NULL DEFAULT '',
  label2 TEXT NOT NULL DEFAULT '',
  n      INTEGER NOT NULL,
  PRIMARY KEY (metric, label1, label2)
) WITHOUT ROWID;

-- The model latency histogram per provider and model: bucket i counts attempts with
-- latency_ms <= the i-th bound of store::k_latency_buckets_ms and above the one before;
-- bucket 9 is above the last bound (+Inf).
CREATE TABLE metric_latency (
  provider TEXT NOT NULL,
  model    TEXT NOT NULL,
  bucket   INTEGER NOT NULL,
  n        INTEGER NOT NULL,
  sum_ms   INTEGER NOT NULL,
  PRIMARY KEY (provider, model, bucket)
) WITHOUT ROWID;

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
         count(*), sum(latency_ms)
  FROM attempts WHERE latency_ms IS NOT NULL GROUP BY 1, 2, 3;

-- "WHERE true" in INSERT ... SELECT ... ON CONFLICT: SQLite's documented way to tell the
-- upsert's ON from a join's.
CREATE TRIGGER metric_inbox_insert AFTER INSERT ON inbox BEGIN
  INSERT INTO metric_counts (metric, label1, label2, n) SELECT 'messages', NEW.channel, NEW.outcome, 1 WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER metric_inbox_outcome AFTER UPDATE OF outcome ON inbox WHEN OLD.outcome IS NOT NEW.outcome BEGIN
  UPDATE metric_counts SET n = n - 1 WHERE metric = 'messages' AND label1 = OLD.channel AND label2 = OLD.outcome;
  INSERT INTO metric_counts (metric, label1, label2, n) SELECT 'messages', NEW.channel, NEW.outcome, 1 WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER metric_attempts_insert AFTER INSERT ON attempts BEGIN
  INSERT INTO metric_counts (metric, label1, label2, n)
    SELECT 'attempts', NEW.verdict, coalesce(NEW.error_class, ''), 1 WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
  INSERT INTO metric_counts (metric, label1, label2, n) SELECT 'reasks', '', '', 1 WHERE NEW.attempt > 1
    ON CONFLICT DO UPDATE SET n = n + 1;
  INSERT INTO metric_latency (provider, model, bucket, n, sum_ms)
    SELECT NEW.provider, NEW.model,
           CASE WHEN NEW.latency_ms <= 100 THEN 0 WHEN NEW.latency_ms <= 250 THEN 1 WHEN NEW.latency_ms <= 500 THEN 2
                WHEN NEW.latency_ms <= 1000 THEN 3 WHEN NEW.latency_ms <= 2500 THEN 4
                WHEN NEW.latency_ms <= 5000 THEN 5 WHEN NEW.latency_ms <= 10000 THEN 6
                WHEN NEW.latency_ms <= 30000 THEN 7 WHEN NEW.latency_ms <= 60000 THEN 8 ELSE 9 END,
           1, NEW.latency_ms
    WHERE NEW.latency_ms IS NOT NULL
    ON CONFLICT DO UPDATE SET n = n + 1, sum_ms = sum_ms + excluded.sum_ms;
END;
-- The counted columns of an attempt (verdict, error_class, attempt, provider, model,
-- latency_ms) are written once, with the row: no UPDATE trigger.

CREATE TRIGGER metric_escalations_insert AFTER INSERT ON escalations BEGIN
  INSERT INTO metric_counts (metric, label1, label2, n) SELECT 'escalations', NEW.reason, NEW.status, 1 WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER metric_escalations_status AFTER UPDATE OF status, reason ON escalations
  WHEN OLD.status IS NOT NEW.status OR OLD.reason IS NOT NEW.reason BEGIN
  UPDATE metric_counts SET n = n - 1 WHERE metric = 'escalations' AND label1 = OLD.reason AND label2 = OLD.status;
  INSERT INTO metric_counts (metric, label1, label2, n) SELECT 'escalations', NEW.reason, NEW.status, 1 WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER metric_actions_insert AFTER INSERT ON actions BEGIN
  INSERT INTO metric_counts (metric, label1, label2, n) SELECT 'actions', NEW.status, '', 1 WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER metric_actions_status AFTER UPDATE OF status ON actions WHEN OLD.status IS NOT NEW.status BEGIN
  UPDATE metric_counts SET n = n - 1 WHERE metric = 'actions' AND label1 = OLD.status;
  INSERT INTO metric_counts (metric, label1, label2, n) SELECT 'actions', NEW.status, '', 1 WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
