-- Transcripts of customers' audio files (docs/media.md, "Voice notes transcribed"): with
-- media.transcription set, a kept audio file (a voice note or another audio file) is sent to
-- an OpenAI-compatible speech-to-text endpoint, and its transcript is what the model reads
-- for its message. transcript_state (store/states.h, TranscriptState):
--   none     not to be transcribed: not audio, not kept, or kept while transcription was off
--   pending  kept, waiting for its transcript: transcript_attempts so far, transcript_next_at
--            (NULL: at once), and a request under way holds transcript_lease_owner until
--            transcript_lease_expires_at; the file's message waits for it
--   done     transcript holds the text (transcribed_at when)
--   failed   the endpoint refused it, or every attempt failed: transcript_reason says why;
--            the message escalates as an audio message without a transcript does
-- Each final state (done, failed) appends a `transcript` audit event with the message.
ALTER TABLE media ADD COLUMN transcript_state TEXT NOT NULL DEFAULT 'none'
  CHECK (transcript_state IN ('none', 'pending', 'done', 'failed'));
ALTER TABLE media ADD COLUMN transcript TEXT;
ALTER TABLE media ADD COLUMN transcript_reason TEXT;
ALTER TABLE media ADD COLUMN transcript_attempts BIGINT NOT NULL DEFAULT 0;
ALTER TABLE media ADD COLUMN transcript_next_at TEXT;
ALTER TABLE media ADD COLUMN transcript_lease_owner TEXT;
ALTER TABLE media ADD COLUMN transcript_lease_expires_at TEXT;
ALTER TABLE media ADD COLUMN transcribed_at TEXT;
CREATE INDEX media_transcript_pending ON media (transcript_next_at, id) WHERE transcript_state = 'pending';
