#!/usr/bin/env python3
"""The two backends' migrations build the same schema.

On a fresh PostgreSQL database of the test server (its own, dropped at the end) every
migrations/postgresql/*.sql is applied in order, and on a fresh SQLite file every
migrations/sqlite/*.sql. Then:
  - every table and view exists on both, with the same column names in the same order, and
    the types a C++ reader sees the same way (BIGINT, TEXT, DOUBLE PRECISION on PostgreSQL
    for SQLite's INTEGER, TEXT, REAL);
  - every index, unique constraint and trigger exists on both;
  - the same small history (plain SQL written once, run on both; the triggers keep the
    metric tables) gives the same rows in every table and view, numbers compared as numbers;
  - the audit trail's rule is the same: an erasure passes, any other change is refused;
  - every SQL block of docs/sql.md's "Audit queries" runs on both and answers the same.

Usage: schema_test.py SOURCE_DIR   (DISPATCHD_TEST_POSTGRESQL_DIR names the server's folder:
tests/postgresql/cluster.sh)
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

# SQLite's declared type -> what PostgreSQL must declare for the same C++ reading.
TYPES = {"INTEGER": "bigint", "TEXT": "text", "REAL": "double precision", "BLOB": "bytea"}

# Written so that every audit query of docs/sql.md has an answer (its literal message id 3, contact
# 15551230001 and cutoff 2026-11-30T11:45:00Z), and every trigger fires.
# Written before migration 0004 (after 0003: the columns of 0001 and 0002 only), so that the
# later files run over rows: 0004 keeps them (SQLite rebuilds the audit table), 0008 and
# 0010 count them once, 0013 leaves them unsalted.
EARLY_AFTER = 3
EARLY = """
INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload, message_type)
  VALUES ('whatsapp', 'wamid.1', 'wa:15551230001', '15551230001', '2026-11-30T09:00:00Z', 'Where is ORD-1001?', '{}',
          'text');
INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload, message_type)
  VALUES ('whatsapp', 'wamid.2', 'wa:15551230002', '15551230002', '2026-11-30T09:05:00Z', 'Refund, please', '{}',
          'text');
INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload, message_type)
  VALUES ('gmail', '<m3@example.com>', 'gm:t3', 'maria@example.com', '2026-12-01T10:00:00Z', 'Hello é ü "quoted"',
          '{"raw":"x"}', 'email');
INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload)
  VALUES ('gmail', '<m4@example.com>', 'gm:t4', 'bob@example.com', '2026-11-30T10:30:00Z', 'still waiting', '{}');

INSERT INTO attempts (message_id, attempt, provider, model, raw_output, verdict, errors, error_class, latency_ms,
                      input_tokens, output_tokens, finish_reason, created_at)
  VALUES (2, 1, 'openai', 'gpt-4o-mini', '{"x":1}', 'invalid',
          '[{"path":"/recipient","code":"recipient","message":"m"}]', 'recipient', 200, 560, 40, 'stop',
          '2026-11-30T09:05:02Z');
INSERT INTO attempts (message_id, attempt, provider, model, raw_output, verdict, errors, error_class, latency_ms,
                      input_tokens, output_tokens, finish_reason, created_at)
  VALUES (2, 2, 'openai', 'gpt-4o-mini', '{"x":2}', 'invalid', '[{"path":"","code":"truncated","message":"m"}]',
          'truncated', 70000, 650, 40, 'length', '2026-11-30T09:05:09Z');
INSERT INTO escalations (message_id, reason, detail, proposed_action, created_at)
  VALUES (2, 'contract_failed', '{"attempts":2}', '{"action":"refund","text":"Refund approved."}',
          '2026-11-30T09:05:10Z');
INSERT INTO audit (at, event, message_id, actor, detail, prev_hash, hash)
  VALUES ('2026-11-29T00:00:00Z', 'received', NULL, 'dispatchd', '{"old":true}', 'h0', 'h00');
INSERT INTO audit (at, event, message_id, actor, detail, prev_hash, hash)
  VALUES ('2026-11-29T00:00:01Z', 'received', 2, 'dispatchd', '{"old":2}', 'h00', 'h01');
"""

# After every migration.
HISTORY = """
INSERT INTO attempts (message_id, attempt, provider, model, raw_output, verdict, errors, error_class, latency_ms,
                      input_tokens, output_tokens, finish_reason, created_at, cached_input_tokens, cache_write_tokens,
                      reasoning_tokens, cost_usd)
  VALUES (1, 1, 'openai', 'gpt-4o-mini', '{"action":"reply"}', 'valid', '[]', NULL, 820, 500, 40, 'stop',
          '2026-11-30T09:00:02Z', 0, 0, 0, 0.000099);
INSERT INTO attempts (message_id, attempt, provider, model, verdict, errors, error_class, latency_ms, created_at)
  VALUES (3, 1, 'gemini', 'gemini-2.0-flash', 'error', '[]', 'no_text', 1210, '2026-12-01T10:00:03Z');
INSERT INTO attempts (message_id, attempt, provider, model, raw_output, verdict, latency_ms, input_tokens,
                      output_tokens, created_at, reasoning_tokens, cost_usd)
  VALUES (3, 2, 'gemini', 'gemini-2.0-flash', '{"action":"reply"}', 'valid', 2400, 300, 20, '2026-12-01T10:00:06Z',
          12, 0.25);

INSERT INTO escalations (message_id, reason, detail, created_at)
  VALUES (4, 'provider_unavailable', NULL, '2026-11-30T10:31:00Z');
INSERT INTO escalations (message_id, reason, detail, created_at)
  VALUES (3, 'review_flags', '{"flags":["tone"]}', '2026-12-01T10:00:07Z');
UPDATE escalations SET status = 'claimed', assignee = 'ana', claimed_at = '2026-11-30T09:10:00Z' WHERE id = 1;
UPDATE escalations SET status = 'resolved', resolution = 'edited', resolved_at = '2026-11-30T09:12:00Z' WHERE id = 1;

INSERT INTO actions (message_id, escalation_id, action, arguments, recipient, body, status, created_by,
                     idempotency_key, created_at, updated_at)
  VALUES (1, NULL, 'reply', '{"text":"ORD-1001 ships tomorrow."}', '15551230001', 'ORD-1001 ships tomorrow.',
          'approved', 'dispatchd', 'dispatchd-1-1', '2026-11-30T09:00:02Z', '2026-11-30T09:00:02Z');
INSERT INTO actions (message_id, escalation_id, action, arguments, recipient, body, status, created_by,
                     idempotency_key, created_at, updated_at)
  VALUES (2, 1, 'refund', '{"text":"Refund approved."}', '15551230002', 'Refund approved.', 'proposed', 'dispatchd',
          'dispatchd-2-1', '2026-11-30T09:05:10Z', '2026-11-30T09:05:10Z');
INSERT INTO actions (message_id, escalation_id, action, arguments, recipient, body, status, created_by,
                     idempotency_key, created_at, updated_at)
  VALUES (2, 1, 'staff_reply', '{"text":"Your refund is on its way."}', '15551230002', 'Your refund is on its way.',
          'approved', 'ana', 'dispatchd-2-2', '2026-11-30T09:12:00Z', '2026-11-30T09:12:00Z');
INSERT INTO actions (message_id, action, arguments, recipient, body, status, created_by, idempotency_key, created_at,
                     updated_at)
  VALUES (3, 'reply', '{"text":"Hi Maria"}', 'maria@example.com', 'Hi Maria', 'approved', 'dispatchd', 'dispatchd-3-1',
          '2026-12-01T10:00:06Z', '2026-12-01T10:00:06Z');
UPDATE actions SET status = 'sending', updated_at = '2026-11-30T09:00:03Z' WHERE id = 1;
UPDATE actions SET status = 'sent', provider_message_id = 'wamid.out1', updated_at = '2026-11-30T09:00:04Z'
  WHERE id = 1;
UPDATE actions SET status = 'rejected', updated_at = '2026-11-30T09:12:00Z' WHERE id = 2;
UPDATE actions SET status = 'sending', updated_at = '2026-11-30T09:12:01Z' WHERE id = 3;
UPDATE actions SET status = 'sent', provider_message_id = 'wamid.out2', updated_at = '2026-11-30T09:12:02Z'
  WHERE id = 3;
UPDATE actions SET status = 'sending', updated_at = '2026-12-01T10:00:07Z' WHERE id = 4;
UPDATE actions SET status = 'unknown', error = 'timeout', updated_at = '2026-12-01T10:00:37Z' WHERE id = 4;

UPDATE inbox SET state = 'done', outcome = 'replied' WHERE id IN (1, 3);
UPDATE inbox SET state = 'done', outcome = 'escalated' WHERE id = 2;
UPDATE inbox SET state = 'processing', lease_owner = 'host:8080', lease_expires_at = '2026-11-30T10:31:30Z'
  WHERE id = 4;

INSERT INTO audit (at, event, message_id, actor, detail, prev_hash, hash, salt, detail_digest)
  VALUES ('2026-11-30T09:00:00Z', 'received', 1, 'dispatchd', '{"text":"Where is ORD-1001?"}', 'h01', 'h1', 's1', 'd1');
INSERT INTO audit (at, event, message_id, actor, detail, prev_hash, hash, salt, detail_digest)
  VALUES ('2026-12-01T10:00:06Z', 'action', 3, 'dispatchd',
          '{"action":4,"name":"reply","to":"approved","recipient":"maria@example.com","recipient_written":"Maria@Example.com"}',
          'h1', 'h2', 's2', 'd2');
INSERT INTO audit (at, event, message_id, actor, detail, prev_hash, hash, salt, detail_digest)
  VALUES ('2026-11-30T09:10:00Z', 'staff_claim', 2, 'ana', '{"escalation":1}', 'h2', 'h3', 's3', 'd3');
INSERT INTO audit (at, event, message_id, actor, detail, prev_hash, hash, salt, detail_digest)
  VALUES ('2026-11-30T09:12:00Z', 'staff_resolved', 2, 'ana', '{"escalation":1}', 'h3', 'h4', 's4', 'd4');
UPDATE audit SET salt = NULL, detail = '{"erased":true}' WHERE id = 3;
-- 0013's code step gives a row from before it a salt and a digest, once.
UPDATE audit SET salt = 's0', detail_digest = 'd0', prev_hash = 'h4', hash = 'h5' WHERE id = 1;

INSERT INTO staff_accounts (name, token_hash, created_at) VALUES ('ana', 'th-ana', '2026-11-29T08:00:00Z');
INSERT INTO staff_accounts (name, token_hash, created_at, revoked_at)
  VALUES ('bo', 'th-bo', '2026-11-29T08:00:00Z', '2026-11-30T08:00:00Z');
INSERT INTO staff_sessions (id_hash, name, csrf, created_at, last_seen_at)
  VALUES ('sess1', 'ana', 'c1', '2026-11-30T09:00:00Z', '2026-11-30T09:12:00Z');
INSERT INTO staff_sessions (id_hash, name, csrf, created_at, last_seen_at)
  VALUES ('sess2', 'ana', 'c2', '2026-11-30T09:00:00Z', '2026-11-30T09:00:00Z');

INSERT INTO poll_cursors (channel, mailbox, cursor, started_at, updated_at)
  VALUES ('gmail', 'support@example.com', '123456', '2026-11-29T00:00:00Z', '2026-12-01T10:00:00Z');
-- A channel added after whatsapp and gmail: the schema takes any registered channel's name (0035).
INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload, message_type)
  VALUES ('imap', '<m5@example.net>', 'imap:t5', 'lee@example.net', '2026-12-01T11:00:00Z', 'Any news?', '{}',
          'email');
INSERT INTO poll_cursors (channel, mailbox, cursor, started_at, updated_at)
  VALUES ('imap', 'soporte@example.test', '1700000000:42', '2026-11-29T00:00:00Z', '2026-12-01T11:00:00Z');
INSERT INTO notify_cursor (id, last_audit_id, started_at, updated_at)
  VALUES (1, 3, '2026-11-29T00:00:00Z', '2026-11-30T09:10:01Z');
INSERT INTO audit_anchor (id, last_id, last_hash, updated_at) VALUES (1, 0, 'h0', '2026-12-01T00:00:00Z');
INSERT INTO escalation_notes (escalation_id, message_id, author, text, created_at)
  VALUES (1, 2, 'ana', 'Called the customer: "refund", é ü', '2026-11-30T09:11:00Z');
INSERT INTO saved_replies (name, text, created_by, created_at, updated_at, removed_at)
  VALUES ('hi', 'Hola {customer}, {{ü}}', 'ana', '2026-11-30T09:00:00Z', '2026-11-30T09:00:00Z', NULL);
INSERT INTO saved_replies (name, text, created_by, created_at, updated_at, removed_at)
  VALUES ('hi', 'old', 'admin', '2026-11-29T09:00:00Z', '2026-11-29T09:00:00Z', '2026-11-29T10:00:00Z');
"""

# Each must be refused on both engines (the schema, not the store, keeps these rules).
REFUSED = [
    "UPDATE audit SET actor = 'mallory' WHERE id = 4",
    "UPDATE audit SET detail = '{\"erased\":true}' WHERE id = 3",  # erased: no salt left
    "UPDATE audit SET hash = 'x' WHERE id = 3",  # an erased row keeps its links
    "UPDATE audit SET salt = 's9', detail_digest = 'd9' WHERE id = 1",  # salted once only
    "UPDATE audit SET salt = 's9', detail_digest = 'd9', detail = '{}' WHERE id = 2",  # the event stays
    "DELETE FROM inbox WHERE id = 1",  # still referenced
    "INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload)"
    " VALUES ('whatsapp', 'wamid.1', 'c', 's', 't', 'again', '{}')",
    "INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload)"
    " VALUES ('imap', '<m5@example.net>', 'c', 's', 't', 'again', '{}')",
    "INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text, raw_payload)"
    " VALUES (NULL, 'm6', 'c', 's', 't', 'no channel', '{}')",
    "INSERT INTO attempts (message_id, attempt, provider, model, verdict, created_at)"
    " VALUES (999, 1, 'p', 'm', 'valid', 't')",
    "INSERT INTO notify_cursor (id, last_audit_id, started_at, updated_at) VALUES (2, 1, 't', 't')",
    "INSERT INTO escalation_notes (escalation_id, message_id, author, text, created_at)"
    " VALUES (999, 2, 'ana', 'x', 't')",  # no such escalation
    "INSERT INTO saved_replies (name, text, created_by, created_at, updated_at) VALUES ('hi', 'x', 'a', 't', 't')",
    "UPDATE actions SET status = 'lost' WHERE id = 1",
]

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}")


class Postgres:
    """psql against one database of the test server; rows come back as JSON."""

    def __init__(self, server_dir, database):
        self.env = dict(os.environ, PGPASSWORD=open(os.path.join(server_dir, "password")).read().strip())
        self.port = open(os.path.join(server_dir, "port")).read().strip()
        self.database = database

    def psql(self, *args, database=None, check_exit=True):
        command = ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", self.port,
                   "-U", "dispatchd", "-d", database or self.database, *args]
        run = subprocess.run(command, env=self.env, capture_output=True, text=True)
        if check_exit and run.returncode != 0:
            raise RuntimeError(f"psql {' '.join(args)[:200]}: {run.stderr.strip()}")
        return run

    def run_file(self, path):
        self.psql("-1", "-f", path)

    def run_sql(self, sql):
        return self.psql("-1", "-c", sql, check_exit=False)

    def rows(self, sql):
        """(column names, rows as lists) of a query. Each row comes as a JSON object whose
        pairs keep the query's order (and its duplicate names); with no rows, the names come
        from a temporary view of the query."""
        body = sql.rstrip().rstrip(";")
        out = self.psql("-c", f"SELECT coalesce(json_agg(to_json(q.*)), '[]') FROM ({body}) q").stdout
        parsed = json.loads(out, object_pairs_hook=lambda pairs: pairs)
        if not parsed:
            names = self.psql("-c", f"CREATE TEMP VIEW described AS {body}; "
                              "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) "
                              "FROM information_schema.columns WHERE table_name = 'described'").stdout
            return names.strip().split(","), []
        return [name for name, _ in parsed[0]], [[value for _, value in row] for row in parsed]

    def scalar_list(self, sql):
        return [line for line in self.psql("-c", sql).stdout.splitlines() if line]


def normalized(value):
    """Numbers as numbers whatever the engine's type (SQLite's 0 beside PostgreSQL's 0.0,
    numeric's 66.7 beside a float's), everything else as it is."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    return float(f"{float(value):.12g}")


def normalized_rows(rows):
    return sorted((tuple(normalized(v) for v in row) for row in rows), key=repr)


def sqlite_rows(db, sql):
    cursor = db.execute(sql)
    return [d[0] for d in cursor.description], [list(row) for row in cursor.fetchall()]


def sqlite_schema(db):
    objects = {}
    for kind in ("table", "view"):
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%'", (kind,)):
            columns = [(row[1], row[2]) for row in db.execute(f"PRAGMA table_info({name})")]
            objects[name] = (kind, columns)
    return objects


def postgres_schema(pg):
    objects = {}
    kinds = dict(line.split("|") for line in pg.scalar_list(
        "SELECT table_name, CASE table_type WHEN 'VIEW' THEN 'view' ELSE 'table' END FROM information_schema.tables "
        "WHERE table_schema = current_schema()"))
    for line in pg.scalar_list("SELECT table_name, column_name, data_type FROM information_schema.columns "
                               "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"):
        table, column, data_type = line.split("|")
        objects.setdefault(table, (kinds[table], []))[1].append((column, data_type))
    return objects


def compare_schema(db, pg):
    lite, post = sqlite_schema(db), postgres_schema(pg)
    check(set(lite) == set(post), f"tables and views differ: SQLite only {sorted(set(lite) - set(post))}, "
                                  f"PostgreSQL only {sorted(set(post) - set(lite))}")
    for name in sorted(set(lite) & set(post)):
        (kind, columns), (pg_kind, pg_columns) = lite[name], post[name]
        check(kind == pg_kind, f"{name} is a {kind} on SQLite, a {pg_kind} on PostgreSQL")
        check([c for c, _ in columns] == [c for c, _ in pg_columns],
              f"{name}'s columns differ: SQLite {[c for c, _ in columns]}, PostgreSQL {[c for c, _ in pg_columns]}")
        for column, data_type in pg_columns:
            check(data_type in TYPES.values(), f"{name}.{column} is {data_type} on PostgreSQL")
        if kind == "table":
            for (column, declared), (_, data_type) in zip(columns, pg_columns):
                check(TYPES.get(declared) == data_type, f"{name}.{column}: {declared} on SQLite, {data_type} on "
                                                        "PostgreSQL")
    print(f"schema: {len(lite)} tables and views compared")
    return sorted(lite), {name: kind for name, (kind, _) in lite.items()}


def compare_indexes(db, pg):
    lite = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")}
    post = set(pg.scalar_list(
        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = current_schema() "
        "AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)"))
    check(lite == post, f"indexes differ: SQLite only {sorted(lite - post)}, PostgreSQL only {sorted(post - lite)}")
    # UNIQUE constraints (SQLite's automatic indexes of origin 'u'), by table and columns.
    lite_unique = set()
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
        for index in db.execute(f"PRAGMA index_list({table})").fetchall():
            if index[3] == "u":
                columns = tuple(row[2] for row in db.execute(f"PRAGMA index_info({index[1]})"))
                lite_unique.add((table, columns))
    post_unique = set()
    for line in pg.scalar_list(
            "SELECT t.relname, string_agg(a.attname, ',' ORDER BY k.ord) FROM pg_constraint c "
            "JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace s ON s.oid = t.relnamespace "
            "CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord) "
            "JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum "
            "WHERE c.contype = 'u' AND s.nspname = current_schema() GROUP BY c.oid, t.relname"):
        table, columns = line.split("|")
        post_unique.add((table, tuple(columns.split(","))))
    check(lite_unique == post_unique, f"unique constraints differ: SQLite {sorted(lite_unique)}, "
                                      f"PostgreSQL {sorted(post_unique)}")
    lite_triggers = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    post_triggers = set(pg.scalar_list(
        "SELECT DISTINCT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
        "JOIN pg_namespace s ON s.oid = c.relnamespace WHERE NOT t.tgisinternal AND s.nspname = current_schema()"))
    check(lite_triggers == post_triggers, f"triggers differ: SQLite only {sorted(lite_triggers - post_triggers)}, "
                                          f"PostgreSQL only {sorted(post_triggers - lite_triggers)}")
    print(f"indexes: {len(lite)}, unique constraints: {len(lite_unique)}, triggers: {len(lite_triggers)} compared")


def columns_of(db, table):
    return [row[1] for row in db.execute(f"SELECT * FROM pragma_table_info('{table}') ORDER BY cid")]


def compare_rows(label, db, pg, sql):
    try:
        lite_names, lite = sqlite_rows(db, sql)
    except sqlite3.Error as error:
        check(False, f"{label} fails on SQLite: {error}")
        return
    try:
        post_names, post = pg.rows(sql)
    except RuntimeError as error:
        check(False, f"{label} fails on PostgreSQL: {error}")
        return
    check(lite_names == post_names, f"{label}: columns {lite_names} on SQLite, {post_names} on PostgreSQL")
    check(normalized_rows(lite) == normalized_rows(post),
          f"{label}: rows differ\n  SQLite     {normalized_rows(lite)}\n  PostgreSQL {normalized_rows(post)}")
    return len(lite)


def doc_queries(source):
    text = open(os.path.join(source, "docs", "sql.md"), encoding="utf-8").read()
    start = text.index("## Audit queries")
    end = text.find("\n## ", start + 1)  # the next section, or the end of the file
    if end < 0:
        end = len(text)
    return re.findall(r"```sql\n(.*?)```", text[start:end], re.S)


def main():
    if len(sys.argv) != 2 or "DISPATCHD_TEST_POSTGRESQL_DIR" not in os.environ:
        print(__doc__, file=sys.stderr)
        return 2
    source = sys.argv[1]
    database = f"schema_test_{os.getpid()}"
    admin = Postgres(os.environ["DISPATCHD_TEST_POSTGRESQL_DIR"], "dispatchd")
    admin.psql("-c", f"CREATE DATABASE {database}")
    try:
        with tempfile.TemporaryDirectory(prefix="dispatchd-schema-") as tmp:
            run(source, Postgres(os.environ["DISPATCHD_TEST_POSTGRESQL_DIR"], database), os.path.join(tmp, "d.db"))
    finally:
        admin.psql("-c", f"DROP DATABASE {database} WITH (FORCE)")
    print(f"{len(failures)} failed" if failures else "ok")
    return 1 if failures else 0


# A SQLite migration that rebuilds a table other tables point at says so on its first line;
# the store's runner (store/migrations.cpp) then turns foreign keys off around it and checks
# them before it commits. Applied here the same way.
FOREIGN_KEYS_OFF = "-- dispatchd: foreign keys off during this migration"


def apply_sqlite_migration(db, sql, name):
    keys_off = sql.startswith(FOREIGN_KEYS_OFF)
    if keys_off:
        db.execute("PRAGMA foreign_keys = OFF")
    try:
        db.executescript("BEGIN;\n" + sql)
        broken = db.execute("SELECT count(*) FROM pragma_foreign_key_check").fetchone()[0] if keys_off else 0
        check(broken == 0, f"{name}: {broken} row(s) would break a foreign key on SQLite")
        db.execute("COMMIT")
    finally:
        if keys_off:
            db.execute("PRAGMA foreign_keys = ON")


def run(source, pg, sqlite_path):
    names = {}
    for backend in ("sqlite", "postgresql"):
        folder = os.path.join(source, "migrations", backend)
        names[backend] = sorted(f for f in os.listdir(folder) if f.endswith(".sql"))
    check(names["sqlite"] == names["postgresql"], f"the migration files differ: {names}")
    db = sqlite3.connect(sqlite_path, isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")  # as the store opens every database
    for number, name in enumerate(names["sqlite"], 1):
        apply_sqlite_migration(db, open(os.path.join(source, "migrations/sqlite", name)).read(), name)
        if number == EARLY_AFTER:
            db.executescript("BEGIN;\n" + EARLY + "\nCOMMIT;")
    for number, name in enumerate(names["postgresql"], 1):
        pg.run_file(os.path.join(source, "migrations/postgresql", name))
        if number == EARLY_AFTER:
            written = pg.run_sql(EARLY)
            check(written.returncode == 0, f"the early history fails on PostgreSQL: {written.stderr.strip()}")
    print(f"migrations: {len(names['sqlite'])} applied on each, with rows written after {EARLY_AFTER}")

    objects, kinds = compare_schema(db, pg)
    compare_indexes(db, pg)

    db.executescript("BEGIN;\n" + HISTORY + "\nCOMMIT;")
    written = pg.run_sql(HISTORY)
    check(written.returncode == 0, f"the history fails on PostgreSQL: {written.stderr.strip()}")
    for statement in REFUSED:
        try:
            db.execute(statement)
            check(False, f"SQLite accepted: {statement}")
        except sqlite3.Error:
            pass
        check(pg.run_sql(statement).returncode != 0, f"PostgreSQL accepted: {statement}")
    counted = 0
    # The counter tables hold a row per label set and shard (0015: a shard per PostgreSQL
    # connection, one on SQLite): compared as /metrics reads them, summed over shards.
    summed = {"metric_counts": "metric, label1, label2",
              "metric_latency": "provider, model, bucket",
              "metric_usage": "provider, model",
              "spend_days": "day"}
    for name in objects:
        if name in summed:
            keys = summed[name]
            values = [c for c in columns_of(db, name) if c not in keys.split(", ") and c != "shard"]
            sql = (f"SELECT {keys}, " + ", ".join(f"sum({c}) AS {c}" for c in values) +
                   f" FROM {name} GROUP BY {keys} HAVING " + " OR ".join(f"sum({c}) <> 0" for c in values) +
                   f" ORDER BY {keys}")
        else:
            sql = f"SELECT * FROM {name}"
        counted += compare_rows(f"{kinds[name]} {name}", db, pg, sql) or 0
    print(f"rows: {counted} rows in {len(objects)} tables and views compared")
    check(db.execute("SELECT count(*) FROM metric_counts").fetchone()[0] >= 8, "the metric triggers wrote too little")

    queries = doc_queries(source)
    check(len(queries) >= 10, f"only {len(queries)} audit queries found in docs/sql.md")
    answered = []
    for number, sql in enumerate(queries, 1):
        answered.append(compare_rows(f"docs/sql.md audit query {number}", db, pg, sql))
    # The history is written so that every question has an answer: an empty one on both
    # engines would compare equal and prove little.
    check(all(answered), f"docs/sql.md audit queries answered no rows: {answered}")
    print(f"docs/sql.md: {len(queries)} audit queries run on both, rows {answered}")


if __name__ == "__main__":
    sys.exit(main())
