-- Customers' media (docs/media.md): the photos, voice notes, videos, documents and stickers
-- of inbound messages, fetched from the channel after the message is stored and kept in the
-- store itself, so that every instance on one database sees the same files.
--
-- media: one row per file of a message, written with the message (durable first), then
-- fetched. state (store/states.h, MediaState):
--   pending      to be fetched: attempts so far, next_attempt_at (NULL: at once), and a
--                fetch under way holds lease_owner until lease_expires_at
--   stored       kept: blob_id names the bytes, size and sniffed_type (the type the first
--                bytes show; type_mismatch 1 when it differs from declared_type)
--   over_cap     larger than its kind's cap or the store's total; reason says which
--   unfetchable  the channel could not give it (refused, failed past its retries); reason
--   expired      the channel no longer has it (a WhatsApp media id lives about 30 days)
--   mismatch     the bytes' sha256 differs from the one the channel declared: not kept
--   purged       kept, then removed at the end of media.retention_days
--   erased       removed with its customer's data (dispatchctl erase)
-- declared_sha256 is the digest the channel declared (WhatsApp), lower-case hex; NULL
-- when it declares none. provider_ref is the channel's handle: a WhatsApp media id, a Gmail
-- attachment id.
--
-- media_blobs: the bytes, content-addressed: one row per distinct sha256 (digest), however
-- many messages sent the same file. A blob being written has no digest yet and names the
-- media row writing it (writer); a fetch that dies half-way leaves such a blob, removed when
-- the file is fetched again. media_chunks: a blob's bytes in order, at most 256 KiB a
-- chunk, so that no file is ever read or written whole in memory.
CREATE TABLE media_blobs (
  id         INTEGER PRIMARY KEY,
  digest     TEXT UNIQUE,
  size       INTEGER NOT NULL DEFAULT 0,
  writer     INTEGER,
  created_at TEXT NOT NULL
);
CREATE INDEX media_blobs_writer ON media_blobs (writer) WHERE digest IS NULL;

CREATE TABLE media_chunks (
  blob_id INTEGER NOT NULL REFERENCES media_blobs (id) ON DELETE CASCADE,
  seq     INTEGER NOT NULL,
  data    BLOB NOT NULL,
  PRIMARY KEY (blob_id, seq)
);

CREATE TABLE media (
  id               INTEGER PRIMARY KEY,
  message_id       INTEGER NOT NULL REFERENCES inbox (id),
  position         INTEGER NOT NULL,
  kind             TEXT NOT NULL CHECK (kind IN ('image', 'audio', 'video', 'document', 'sticker')),
  provider_ref     TEXT NOT NULL,
  declared_type    TEXT NOT NULL,
  declared_sha256  TEXT,
  filename         TEXT,
  voice            INTEGER NOT NULL DEFAULT 0 CHECK (voice IN (0, 1)),
  state            TEXT NOT NULL DEFAULT 'pending'
                   CHECK (state IN ('pending', 'stored', 'over_cap', 'unfetchable', 'expired', 'mismatch',
                                    'purged', 'erased')),
  reason           TEXT,
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  TEXT,
  lease_owner      TEXT,
  lease_expires_at TEXT,
  blob_id          INTEGER REFERENCES media_blobs (id),
  size             INTEGER,
  sniffed_type     TEXT,
  type_mismatch    INTEGER NOT NULL DEFAULT 0 CHECK (type_mismatch IN (0, 1)),
  created_at       TEXT NOT NULL,
  fetched_at       TEXT,
  UNIQUE (message_id, position)
);
CREATE INDEX media_pending ON media (next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX media_blob ON media (blob_id) WHERE blob_id IS NOT NULL;
CREATE INDEX media_stored ON media (fetched_at) WHERE state = 'stored';
