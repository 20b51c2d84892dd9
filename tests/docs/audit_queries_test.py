#!/usr/bin/env python3
"""Runs every SQL block of docs/sql.md's "Audit queries" section against the seeded history
(tests/support/seed.cpp, started three days ago so that "waited longer than N minutes" has
answers) and checks what each one answers.

Usage: audit_queries_test.py DISPATCHD_SEED docs/sql.md
"""
import datetime
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile


def rows_as_dicts(db, sql):
    cursor = db.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


# One check per query, in the order of docs/sql.md: each takes the rows and raises AssertionError.
def why_escalated(rows):
    assert {r["reason"] for r in rows} == {"contract_failed"}, rows
    assert [r["attempt"] for r in rows] == [1, 2, 3], rows
    assert [r["error_class"] for r in rows] == ["recipient", "recipient", "truncated"], rows
    assert all(r["raw_output"] and r["errors"].startswith("[{") for r in rows), rows


def re_ask_rate(rows):
    first, second = rows
    assert (first["messages"], first["re_asked"], first["re_ask_pct"], first["re_asks"]) == (3, 2, 66.7, 3), first
    assert (second["messages"], second["re_asked"]) == (4, 0), second


def error_classes(rows):
    got = {(r["error_class"], r["attempts"]) for r in rows}
    assert got == {("recipient", 2), ("truncated", 1), ("enum", 1)}, rows


def staff_changes(rows):
    (row,) = rows
    assert row["staff"] == "ana" and row["resolution"] == "edited", row
    assert '"Refund approved."' in row["proposed_action"], row
    assert "on its way" in row["sent_instead"], row


def latency(rows):
    by = {(r["provider"], r["model"]): r for r in rows}
    openai = by[("openai", "gpt-4o-mini")]
    # Nine latencies: 590 640 700 760 820 910 1320 1500 2100 -> p50 is the 5th, p95 the 9th.
    assert (openai["attempts"], openai["p50_ms"], openai["p95_ms"]) == (9, 820, 2100), openai
    assert by[("gemini", "gemini-2.0-flash")]["p50_ms"] == 1210


def waiting(rows):
    kinds = [(r["waiting"], r["message_id"]) for r in rows]
    assert ("message", 8) in kinds, kinds
    assert ("escalation", 3) in kinds and ("escalation", 6) in kinds, kinds
    assert all(r["since"] < CUTOFF for r in rows), rows
    assert [r["since"] for r in rows] == sorted(r["since"] for r in rows), rows


def sent_to_contact(rows):
    assert [r["created_by"] for r in rows] == ["dispatchd", "ana"], rows
    assert rows[0]["body"] == "ORD-1001 ships tomorrow.", rows


def staff_activity(rows):
    got = {(r["actor"], r["event"]): r["events"] for r in rows}
    assert got.get(("ana", "staff_claim")) == 1 and got.get(("ana", "staff_resolved")) == 1, rows


def written_recipients(rows):
    (row,) = rows
    detail = json.loads(row["detail"])
    got = (detail["recipient_written"], detail["recipient"], row["actor"])
    assert got == ("Maria@Example.com", "maria@example.com", "dispatchd"), row


def re_ask_cost(rows):
    # The first day's re-asks: seed2's second attempt and seed3's second and third, at
    # gpt-4o-mini's 0.15 / 0.60 USD per million tokens: 560, 560 and 650 input tokens and 40
    # output tokens each. The second day has no re-ask.
    (row,) = rows
    assert (row["re_asks"], row["unpriced"]) == (3, 0), row
    assert abs(row["re_ask_cost_usd"] - 0.000338) < 1.5e-6, row
    assert abs(row["day_cost_usd"] - 0.000621) < 1.5e-6, row


# The waiting query's cutoff as docs/sql.md writes it, replaced by now minus 15 minutes as a
# reader would replace it.
DOC_CUTOFF = "2026-11-30T11:45:00Z"
CUTOFF = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=15)).strftime("%Y-%m-%dT%H:%M:%SZ")

CHECKS = [why_escalated, re_ask_rate, error_classes, staff_changes, latency, waiting, sent_to_contact,
          staff_activity, written_recipients, re_ask_cost]


def main():
    seed, doc = sys.argv[1], sys.argv[2]
    text = open(doc, encoding="utf-8").read()
    start = text.index("## Audit queries")
    end = text.find("\n## ", start + 1)  # the next section, or the end of the file
    if end < 0:
        end = len(text)
    queries = [q.replace(DOC_CUTOFF, CUTOFF) for q in re.findall(r"```sql\n(.*?)```", text[start:end], re.S)]
    if len(queries) != len(CHECKS):
        print(f"FAIL: {doc} has {len(queries)} audit queries, this test checks {len(CHECKS)}")
        return 1
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "seeded.db")
        day = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=3)).strftime("%Y-%m-%d")
        subprocess.run([seed, path, day], check=True, stdout=subprocess.DEVNULL)
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        for number, (sql, check) in enumerate(zip(queries, CHECKS), 1):
            try:
                check(rows_as_dicts(db, sql))
                print(f"pass {number} {check.__name__}")
            except (AssertionError, sqlite3.Error, KeyError, ValueError) as error:
                failed += 1
                print(f"FAIL {number} {check.__name__}: {error!r}")
    print(f"{len(queries) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
