-- Admin staff accounts (docs/staff.md, "Hand-overs"): an account marked admin may reassign a
-- claim to another account, as the admin token may. 0 or 1; a new or re-added account is not
-- an admin until `dispatchctl staff admin NAME on` (or `staff add NAME --admin`) says so.
-- v_staff gains the column at its end.
ALTER TABLE staff_accounts ADD COLUMN admin INTEGER NOT NULL DEFAULT 0 CHECK (admin IN (0, 1));
DROP VIEW v_staff;
CREATE VIEW v_staff AS
  SELECT name, created_at, revoked_at, (SELECT count(*) FROM staff_sessions s WHERE s.name = a.name) AS sessions,
         admin
  FROM staff_accounts a;
