-- Every catalog tool call a message made (kind http or mcp), in order: what was called, how
-- long it took, how large the answer was and what became of it. What was sent is the
-- attempt's output that asked for the call (attempt); what came back went to the model and
-- is not kept here (a tool's answer may hold anyone's data; the trail shows sizes only).
--   attempt      the attempt whose valid output asked for the call
--   server       mcp: the mcp.servers name; http: NULL
--   tool         mcp: the tool's name; http: the catalog's URL template (never the filled URL)
--   outcome      ok, tool_error, rejected, unavailable, timed_out, bad_answer, disabled
CREATE TABLE tool_calls (
  id           INTEGER PRIMARY KEY,
  message_id   INTEGER NOT NULL REFERENCES inbox (id),
  attempt      INTEGER NOT NULL CHECK (attempt >= 1),
  action       TEXT NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('http', 'mcp')),
  server       TEXT,
  tool         TEXT NOT NULL,
  outcome      TEXT NOT NULL CHECK (outcome IN ('ok', 'tool_error', 'rejected', 'unavailable', 'timed_out',
                                                'bad_answer', 'disabled')),
  duration_ms  INTEGER NOT NULL CHECK (duration_ms >= 0),
  result_bytes INTEGER NOT NULL CHECK (result_bytes >= 0),
  created_at   TEXT NOT NULL
);
CREATE INDEX tool_calls_message ON tool_calls (message_id);

CREATE VIEW v_tool_calls AS
  SELECT t.id AS tool_call_id, t.message_id, m.channel, t.attempt, t.action, t.kind, t.server, t.tool, t.outcome,
         t.duration_ms, t.result_bytes, t.created_at
  FROM tool_calls t JOIN inbox m ON m.id = t.message_id;
