-- Online replay's and eval's run tables (store/tools/replay.h), created in a scratch database
-- only, never in a live one, by store::prepare_scratch in the transaction that chooses the
-- run's messages. Not listed in schema_migrations: they are a run's, not the schema's.
--
-- replay_progress: one row per chosen message, in replay order, with the decision recorded
-- for it before the run and its status in this run (pending -> decided | failed).
CREATE TABLE replay_progress (
  seq           INTEGER PRIMARY KEY,
  message_id    INTEGER NOT NULL UNIQUE REFERENCES inbox (id),
  status        TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'decided', 'failed')),
  detail        TEXT NOT NULL DEFAULT '',
  old_kind      TEXT NOT NULL CHECK (old_kind IN ('none', 'reply', 'escalate', 'ignore')),
  old_action    TEXT NOT NULL,
  old_recipient TEXT NOT NULL,
  old_reason    TEXT NOT NULL,
  old_output    TEXT NOT NULL
);

-- replay_marks: the first action and escalation ids the run may create, so that the run's
-- decision is told from the recorded one.
CREATE TABLE replay_marks (first_action INTEGER NOT NULL, first_escalation INTEGER NOT NULL);
INSERT INTO replay_marks SELECT (SELECT coalesce(max(id), 0) + 1 FROM actions),
                                (SELECT coalesce(max(id), 0) + 1 FROM escalations);
