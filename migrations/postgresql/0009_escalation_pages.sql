-- Staff listings come in pages, oldest first by (created_at, id): this index serves a page
-- without a status filter as escalations_status (status, created_at) serves one with it,
-- instead of sorting every escalation ever opened.
-- PostgreSQL twin of ../sqlite/0009_escalation_pages.sql: the same statement.
CREATE INDEX escalations_created ON escalations (created_at);
