-- The audit table without the UNIQUE index on `hash`. Nothing looks a row up by its hash
-- (`dispatchctl audit verify` walks the chain in id order, and a forged duplicate would
-- break the chain anyway), while that index's random keys made each audit insert touch a
-- page of its own: about a seventh of the daemon's write work at load (README Performance).
-- PostgreSQL twin of ../sqlite/0004_audit_hash_not_indexed.sql. SQLite cannot drop a column
-- constraint and rebuilds the table; PostgreSQL drops the constraint (named by its default
-- rule, table_column_key) in place, so the view, index and trigger stay as they are.
ALTER TABLE audit DROP CONSTRAINT audit_hash_key;
