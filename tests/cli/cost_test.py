#!/usr/bin/env python3
"""Black-box test of `dispatchctl cost`: tokens, cached share and cost per provider and model.

Usage: cost_test.py DISPATCHCTL DISPATCHD_SEED SOURCE_DIR
On the seeded history (tests/support/seed.cpp, which reads nothing from a cache), plus
attempts of a second model written into its attempts table, so that the store's own triggers
count them as the daemon's would; and on an empty database.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

ctl, seed, src = sys.argv[1:4]
# check() and its tally come from the end-to-end harness.
sys.path.insert(0, os.path.join(src, "tests", "e2e"))
import harness  # noqa: E402
from harness import check  # noqa: E402


def run(*args):
    return subprocess.run([ctl, *args], capture_output=True, text=True, timeout=60)


def models(db):
    r = run("--db", db, "cost", "--json")
    check("--json: exit 0", r.returncode == 0, r.stderr)
    return {m["model"]: m for m in json.loads(r.stdout)["models"]} if r.returncode == 0 else {}


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "d.db")
    subprocess.run([seed, db], check=True, capture_output=True)
    with sqlite3.connect(db) as conn:
        expected = {row[0]: row[1:] for row in conn.execute(
            "SELECT model, provider, count(*), sum(input_tokens), sum(output_tokens), sum(cost_usd) FROM attempts"
            " GROUP BY model, provider")}
        message_id = conn.execute("SELECT min(id) FROM inbox").fetchone()[0]

    # The seeded history: every attempt priced, nothing read from a cache.
    seeded = models(db)
    check("seeded: one row per model", sorted(seeded) == sorted(expected), (sorted(seeded), sorted(expected)))
    for model, (provider, attempts, input_tokens, output_tokens, cost) in expected.items():
        row = seeded.get(model, {})
        check(f"seeded {model}: provider", row.get("provider") == provider, row)
        check(f"seeded {model}: attempts, all priced",
              row.get("attempts") == attempts and row.get("priced") == attempts and row.get("unpriced") == 0, row)
        check(f"seeded {model}: input and output tokens",
              (row.get("input_tokens"), row.get("output_tokens")) == (input_tokens, output_tokens), row)
        check(f"seeded {model}: no cached input, a share of 0",
              row.get("cached_input_tokens") == 0 and row.get("cached_share") == 0, row)
        check(f"seeded {model}: the cost of every attempt", abs(row.get("cost_usd", -1) - cost) < 1e-9, row)

    # A second model whose calls read the cache: 1800 of 3000 input tokens (200 + 100 at the
    # input rate, 900 written to the cache) is a share of 0.6; one attempt has no known cost.
    with sqlite3.connect(db) as conn:
        rows = [(90, 200, 1800, 0, 40, 0.0125), (91, 100, 0, 900, 30, None)]
        for attempt, fresh, cached, written, output, price in rows:
            conn.execute(
                "INSERT INTO attempts (message_id, attempt, provider, model, verdict, input_tokens, output_tokens,"
                " cached_input_tokens, cache_write_tokens, reasoning_tokens, cost_usd, created_at)"
                " VALUES (?, ?, 'anthropic', 'claude-test', 'valid', ?, ?, ?, ?, 0, ?, '2026-01-02T03:04:05.000Z')",
                (message_id, attempt, fresh, output, cached, written, price))
    both = models(db)
    cached = both.get("claude-test", {})
    check("cached: one more model", sorted(both) == sorted([*expected, "claude-test"]), sorted(both))
    check("cached: tokens by kind",
          (cached.get("input_tokens"), cached.get("cached_input_tokens"), cached.get("cache_write_tokens"),
           cached.get("output_tokens")) == (300, 1800, 900, 70), cached)
    check("cached: share of all the input", abs(cached.get("cached_share", -1) - 0.6) < 1e-12, cached)
    check("cached: the cost of the priced attempt, the other counted apart",
          (cached.get("attempts"), cached.get("priced"), cached.get("unpriced")) == (2, 1, 1)
          and abs(cached.get("cost_usd", -1) - 0.0125) < 1e-12, cached)
    check("seeded: unchanged beside it", {m: both.get(m) for m in expected} == seeded, both)

    r = run("--db", db, "cost")
    check("text: exit 0", r.returncode == 0, r.stderr)
    lines = r.stdout.splitlines()
    check("text: a header naming the share", lines and lines[0].split()[:6] ==
          ["PROVIDER", "MODEL", "ATTEMPTS", "INPUT", "CACHED", "SHARE"], lines[:1])
    line = next((l.split() for l in lines if "claude-test" in l), [])
    check("text: the cached model's line",
          line == ["anthropic", "claude-test", "2", "300", "1800", "60.0%", "900", "70", "0", "0.0125", "1"], line)
    for model, (_, _, input_tokens, _, _) in expected.items():
        line = next((l.split() for l in lines if model in l.split()), [])
        check(f"text: {model}'s share", line[3:6] == [str(input_tokens), "0", "0.0%"], line)

    # An empty store; usage errors.
    empty = os.path.join(tmp, "empty.db")
    r = run("migrate", "--db", empty)
    check("empty: migrated", r.returncode == 0, r.stderr)
    r = run("--db", empty, "cost", "--json")
    check("empty: no models, no sends", r.returncode == 0 and json.loads(r.stdout) == {"models": [], "sends": []},
          r.stdout + r.stderr)
    r = run("--db", empty, "cost")
    check("empty: said so", r.returncode == 0 and "(no model attempts)" in r.stdout and "(no priced sends)" in r.stdout,
          r.stdout + r.stderr)
    r = run("--db", empty, "cost", "extra")
    check("a positional argument: usage error", r.returncode == 2 and "usage" in r.stderr, r.stderr)
    r = run("--db", os.path.join(tmp, "typo.db"), "cost")
    check("no such database: usage error, nothing created",
          r.returncode == 2 and not os.path.exists(os.path.join(tmp, "typo.db")), r.stderr)

sys.exit(0 if all(harness.results) else 1)
