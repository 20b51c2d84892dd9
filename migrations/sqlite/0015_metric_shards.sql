-- The /metrics counter rows get a shard number (ARCHITECTURE.md, "Scale-out path"). On
-- PostgreSQL several connections write the counters at once, and one row per label set
-- made every transaction that counted something wait for every other one's COMMIT, and
-- deadlock when two took two hot rows in opposite orders (../postgresql/0015_metric_shards.sql).
-- SQLite has one writer: its rows stay one per label set, all in shard 0, and its triggers
-- are unchanged. The column is here so that both engines hold the same tables
-- (dispatchctl migrate-store copies column for column); a scrape sums over shards.
ALTER TABLE metric_counts ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metric_latency ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metric_usage ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
