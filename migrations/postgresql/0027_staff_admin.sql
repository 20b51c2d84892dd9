-- PostgreSQL twin of ../sqlite/0027_staff_admin.sql (its comments say what the column means):
-- BIGINT for INTEGER, as everywhere; the view is replaced with the column at its end.
ALTER TABLE staff_accounts ADD COLUMN admin BIGINT NOT NULL DEFAULT 0 CHECK (admin IN (0, 1));
CREATE OR REPLACE VIEW v_staff AS
  SELECT name, created_at, revoked_at,
         CAST((SELECT count(*) FROM staff_sessions s WHERE s.name = a.name) AS BIGINT) AS sessions, admin
  FROM staff_accounts a;
