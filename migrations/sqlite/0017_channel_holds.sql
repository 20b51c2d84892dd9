-- A provider's "come back later" (a 429 or a quota error with its Retry-After, a
-- connectors::RetryAfter) is the deployment's, not one instance's: Meta and Google count the
-- sends of one number or mailbox, whichever instance makes them. The instance that gets it
-- stores the hold here; every instance reads the holds each second and holds that channel's
-- sends as long (store/instances.h, hold_channel). On one machine (SQLite) the one instance
-- writes and reads its own holds. A row stays after its hold ends; the next hold replaces it.
CREATE TABLE channel_holds (
  channel    TEXT PRIMARY KEY,  -- 'whatsapp', 'gmail'
  hold_until TEXT NOT NULL,     -- ISO 8601 UTC: no send of the channel before this
  held_by    TEXT NOT NULL,     -- the instance the provider asked to wait
  set_at     TEXT NOT NULL
);
