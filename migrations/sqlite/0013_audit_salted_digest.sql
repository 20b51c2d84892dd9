-- The audit chain commits to each event's detail through a salted digest instead of the
-- detail itself, so that a customer's data can be erased (dispatchctl erase) while the
-- chain still verifies (store/audit_digest.h has the formula):
--   salt           16 random bytes, hex, per row; NULL once the row's detail was erased
--   detail_digest  sha256_hex(salt || detail); NULL for a row hashed with the old formula
-- After this file, in the same transaction, a code step (store/migrations.cpp) verifies the
-- existing chain with the old formula, gives every row a salt, a digest and a new hash,
-- verifies the new chain and appends a 'chain_migrated' event naming the old head.
ALTER TABLE audit ADD COLUMN salt TEXT;
ALTER TABLE audit ADD COLUMN detail_digest TEXT;

-- Still append-only, with two exceptions that leave the chain verifiable:
--   re-hashing  a row without a digest gets its salt, digest, prev_hash and hash once
--               (this migration's code step); the event itself stays as it was
--   erasure     a row with a salt loses it and its detail becomes the tombstone; its
--               digest, links and hash stay
DROP TRIGGER IF EXISTS audit_no_update;
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
  WHEN NOT (NEW.id IS OLD.id AND NEW.at IS OLD.at AND NEW.event IS OLD.event AND NEW.message_id IS OLD.message_id
            AND NEW.actor IS OLD.actor
            AND ((OLD.detail_digest IS NULL AND NEW.detail_digest IS NOT NULL AND NEW.salt IS NOT NULL
                  AND NEW.detail IS OLD.detail)
                 OR (OLD.salt IS NOT NULL AND NEW.salt IS NULL AND NEW.detail = '{"erased":true}'
                     AND NEW.detail_digest IS OLD.detail_digest AND NEW.prev_hash IS OLD.prev_hash
                     AND NEW.hash IS OLD.hash)))
BEGIN
  SELECT RAISE(ABORT, 'the audit trail is append-only (an erasure only drops a row''s salt and blanks its detail)');
END;

DROP VIEW v_audit;
CREATE VIEW v_audit AS
  SELECT id AS audit_id, at, event, message_id, actor, detail, prev_hash, hash, salt, detail_digest
  FROM audit ORDER BY id;
