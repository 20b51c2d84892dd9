-- The customers' files each model attempt carried (docs/media.md, "To the model"): a
-- message's stored images, PDF documents and audio go to the model with it when the
-- configured provider dialects read them, in every request about it (re-asks and tool steps
-- too). media_count is the files sent with the attempt's request, media_bytes their size as
-- stored (before base64, which the request adds: 4/3 of it). 0 for an attempt that carried
-- none, rows from before this migration included.
ALTER TABLE attempts ADD COLUMN media_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN media_bytes INTEGER NOT NULL DEFAULT 0;

DROP VIEW v_attempts;
CREATE VIEW v_attempts AS
  SELECT id AS attempt_id, message_id, attempt, provider, model, raw_output, verdict, errors, error_class,
         latency_ms, input_tokens, output_tokens, finish_reason, created_at,
         cached_input_tokens, cache_write_tokens, reasoning_tokens, cost_usd, media_count, media_bytes
  FROM attempts;
