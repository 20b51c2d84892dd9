-- inbox.raw_payload holds the payload as it came when that is valid UTF-8, and otherwise its
-- base64 with raw_encoding = 'base64' (store/raw_payload.h). PostgreSQL's TEXT refuses bytes
-- that are not UTF-8: a mail whose raw bytes are ISO-8859-1, or a broken one kept for staff,
-- failed the whole Gmail poll, at every poll. Both engines follow the one rule, so rows read
-- the same after dispatchctl migrate-store. Rows stored before keep their payload as it is
-- (NULL: as is; on SQLite such a row may hold bytes that are not UTF-8).
ALTER TABLE inbox ADD COLUMN raw_encoding TEXT CHECK (raw_encoding IN ('base64'));
