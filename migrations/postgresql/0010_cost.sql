-- What each model attempt cost. Every billed token is in exactly one column, whatever the
-- provider (llm/provider.h's Usage), so that the columns add up to the billed total:
--   input_tokens         input at the input rate (from now on without cached input: OpenAI's
--                        prompt_tokens and Gemini's promptTokenCount include it, and it is
--                        taken out; Anthropic's input_tokens never included it)
--   cached_input_tokens  input read from the provider's cache (cached-input rate)
--   cache_write_tokens   input written to the provider's cache (cache-write rate; Anthropic)
--   output_tokens        the answer at the output rate (from now on without OpenAI's
--                        reasoning tokens, which completion_tokens includes)
--   reasoning_tokens     thinking at the output rate: Gemini's thoughtsTokenCount (which
--                        output_tokens never included), OpenAI's reasoning_tokens; Anthropic
--                        counts thinking inside output_tokens and reports no split (0)
--   cost_usd             USD at the llm.prices in force when the call was made; NULL when
--                        unknown (the model has no price, or it has tokens of a kind its
--                        price has no rate for): unknown is not free
-- Rows from before this migration keep their input_tokens and output_tokens as the provider
-- reported them, and have NULL in the new columns: their cost was not recorded.
--
-- PostgreSQL twin of ../sqlite/0010_cost.sql. Where it differs, and why:
--   - REAL is DOUBLE PRECISION (SQLite's REAL is an 8-byte float; PostgreSQL's REAL is 4)
--   - v_messages' cost is cast to DOUBLE PRECISION, the upgrade scan's token sums (numeric
--     on PostgreSQL) are stored as BIGINT
--   - priced / unpriced add 1 or 0 through CASE: a PostgreSQL boolean is not a number
--   - the trigger runs a plpgsql function of its name, its upsert names the conflict target

ALTER TABLE attempts ADD COLUMN cached_input_tokens BIGINT;
ALTER TABLE attempts ADD COLUMN cache_write_tokens BIGINT;
ALTER TABLE attempts ADD COLUMN reasoning_tokens BIGINT;
ALTER TABLE attempts ADD COLUMN cost_usd DOUBLE PRECISION;

DROP VIEW v_attempts;
CREATE VIEW v_attempts AS
  SELECT id AS attempt_id, message_id, attempt, provider, model, raw_output, verdict, errors, error_class,
         latency_ms, input_tokens, output_tokens, finish_reason, created_at,
         cached_input_tokens, cache_write_tokens, reasoning_tokens, cost_usd
  FROM attempts;

-- A message's cost: the sum of its attempts' costs; NULL when any attempt's cost is
-- unknown; 0 for a message the model was never asked about (a type rule decided it).
DROP VIEW v_messages;
CREATE VIEW v_messages AS
  SELECT id AS message_id, channel, provider_message_id, conversation_id, sender, received_at, text, state, outcome,
         message_type,
         (SELECT CAST(CASE WHEN count(*) = count(a.cost_usd) THEN coalesce(sum(a.cost_usd), 0) END AS DOUBLE PRECISION)
          FROM attempts a WHERE a.message_id = inbox.id) AS cost_usd
  FROM inbox;

-- /metrics' token and cost counters per provider and model, kept by a trigger like
-- metric_counts (migration 0008): a scrape reads a few rows. `unpriced` counts attempts
-- whose cost is unknown (NULL), so a total that leaves them out says so.
CREATE TABLE metric_usage (
  provider            TEXT NOT NULL,
  model               TEXT NOT NULL,
  input_tokens        BIGINT NOT NULL DEFAULT 0,
  cached_input_tokens BIGINT NOT NULL DEFAULT 0,
  cache_write_tokens  BIGINT NOT NULL DEFAULT 0,
  output_tokens       BIGINT NOT NULL DEFAULT 0,
  reasoning_tokens    BIGINT NOT NULL DEFAULT 0,
  cost_usd            DOUBLE PRECISION NOT NULL DEFAULT 0,
  priced              BIGINT NOT NULL DEFAULT 0,
  unpriced            BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (provider, model)
);

-- The existing rows, once (a one-time scan at upgrade): their tokens, and all of them unpriced.
INSERT INTO metric_usage (provider, model, input_tokens, output_tokens, unpriced)
  SELECT provider, model, CAST(coalesce(sum(input_tokens), 0) AS BIGINT),
         CAST(coalesce(sum(output_tokens), 0) AS BIGINT), count(*)
  FROM attempts GROUP BY provider, model;

CREATE FUNCTION metric_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO metric_usage AS u (provider, model, input_tokens, cached_input_tokens, cache_write_tokens, output_tokens,
                                 reasoning_tokens, cost_usd, priced, unpriced)
    VALUES (NEW.provider, NEW.model, coalesce(NEW.input_tokens, 0), coalesce(NEW.cached_input_tokens, 0),
            coalesce(NEW.cache_write_tokens, 0), coalesce(NEW.output_tokens, 0), coalesce(NEW.reasoning_tokens, 0),
            coalesce(NEW.cost_usd, 0), CASE WHEN NEW.cost_usd IS NOT NULL THEN 1 ELSE 0 END,
            CASE WHEN NEW.cost_usd IS NULL THEN 1 ELSE 0 END)
    ON CONFLICT (provider, model) DO UPDATE SET input_tokens = u.input_tokens + excluded.input_tokens,
      cached_input_tokens = u.cached_input_tokens + excluded.cached_input_tokens,
      cache_write_tokens = u.cache_write_tokens + excluded.cache_write_tokens,
      output_tokens = u.output_tokens + excluded.output_tokens,
      reasoning_tokens = u.reasoning_tokens + excluded.reasoning_tokens,
      cost_usd = u.cost_usd + excluded.cost_usd, priced = u.priced + excluded.priced,
      unpriced = u.unpriced + excluded.unpriced;
  RETURN NULL;
END
$$;
CREATE TRIGGER metric_usage_insert AFTER INSERT ON attempts FOR EACH ROW EXECUTE FUNCTION metric_usage_insert();
-- The counted columns are written once, with the row: no UPDATE trigger (as in 0008).
