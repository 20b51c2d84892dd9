#!/usr/bin/env python3
"""Black-box test of `dispatchctl replay --offline` on the seeded history (tests/support/seed.cpp).

Usage: replay_test.py DISPATCHCTL DISPATCHD_SEED SOURCE_DIR
With DISPATCHD_TEST_POSTGRESQL_DIR set (tests/postgresql/cluster.sh's folder) the history is
seeded into a fresh database on that server instead of a SQLite file: the same expectations.
The catalogs are copies of catalog/examples/support.en.json with one change each.
"""
import atexit
import json
import os
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


PG_DIR = os.environ.get("DISPATCHD_TEST_POSTGRESQL_DIR")
PG_DB = f"cli_replay_{os.getpid()}"


def pg(sql):
    subprocess.run(["bash", os.path.join(src, "tests/postgresql/cluster.sh"), "psql", PG_DIR, "-c", sql],
                   check=True, capture_output=True)


def database(tmp):
    """The seeded --db target, the configuration's database keys, and a target that does not exist."""
    if not PG_DIR:
        return os.path.join(tmp, "d.db"), '"database": "d.db"', os.path.join(tmp, "typo.db")
    base = open(os.path.join(PG_DIR, "uri")).read().strip().rsplit("/", 1)[0]
    # libpq (dispatchctl --db, the seed) reads PGPASSWORD; --config names its own variable.
    os.environ["PGPASSWORD"] = os.environ["DISPATCHD_TEST_DB_PASSWORD"] = open(
        os.path.join(PG_DIR, "password")).read().strip()
    pg(f"CREATE DATABASE {PG_DB}")
    atexit.register(pg, f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
    return (f"{base}/{PG_DB}", f'"database": "{base}/{PG_DB}", "database_password_env": "DISPATCHD_TEST_DB_PASSWORD"',
            f"{base}/{PG_DB}_typo")


with tempfile.TemporaryDirectory() as tmp:
    db, db_json, typo = database(tmp)
    subprocess.run([seed, db], check=True, capture_output=True)
    with open(os.path.join(src, "catalog/examples/support.en.json")) as f:
        base = json.load(f)

    def catalog(name, edit):
        doc = json.loads(json.dumps(base))
        edit(doc)
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    no_escalate = catalog("no_escalate.json", lambda d: d.update(
        actions=[a for a in d["actions"] if a["name"] != "escalate_to_human"]))
    short = catalog("short.json", lambda d: d["fields"]["content"].update(maxLength=20))
    config = os.path.join(tmp, "dispatchd.json")
    with open(config, "w") as f:
        f.write('// the daemon\'s configuration\n{ %s, "catalog": "%s", "llm": {"provider": "openai",'
                ' "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "K"} }\n' % (db_json, no_escalate))
    report = os.path.join(tmp, "out.md")

    # The catalog that removes an action, from the configuration: exactly m2's second reply.
    r = run("--config", config, "replay", "--offline", "--report", report, "--json")
    check("config catalog: exit 0", r.returncode == 0, r.stderr)
    out = json.loads(r.stdout) if r.returncode == 0 else {}
    changes = [(c["provider_message_id"], c["attempt"], c["change"]) for c in out.get("changes", [])]
    check("config catalog: exactly the escalation", changes == [("wamid.seed2", 2, "valid_to_refused")], changes)
    check("config catalog: named in the report", out.get("catalog") == no_escalate, out.get("catalog"))
    md = open(report).read() if os.path.exists(report) else ""
    check("markdown sections", all(h in md for h in ("# Offline replay", "## Summary", "## Per action",
                                                     "### valid → refused (1)", "### refused → valid (0)")), md)
    check("markdown names message_id and provider id", "| 2 | wamid.seed2 | whatsapp |" in md, md)
    check("no partial file left", not os.path.exists(report + ".partial"))

    # --catalog overrides the configuration's; --since, --limit; the one-line summary.
    r = run("replay", "--db", db, "--catalog", short, "--offline", "--report", report)
    check("tightened field: exit 0", r.returncode == 0, r.stderr)
    check("tightened field: summary line",
          r.stdout.startswith("replay: 10 attempts of 7 messages checked: 6 unchanged, 4 valid -> refused, "
                              "0 refused -> valid; report in "), r.stdout)
    r = run("replay", "--db", db, "--catalog", short, "--offline", "--since", "2026-12-01", "--report", report, "--json")
    got = sorted(c["provider_message_id"] for c in json.loads(r.stdout)["changes"])
    check("since: the second day only", got == ["18c2f0a1b2c3d4e5", "wamid.seed7"], got)
    r = run("replay", "--db", db, "--catalog", short, "--offline", "--limit", "1", "--report", report, "--json")
    out = json.loads(r.stdout)
    check("limit: the first message only", out["summary"]["messages"] == 1 and
          [c["provider_message_id"] for c in out["changes"]] == ["wamid.seed1"], out["summary"])
    first = run("replay", "--db", db, "--catalog", short, "--offline", "--sample", "3", "--seed", "9",
                "--report", report, "--json").stdout
    again = run("replay", "--db", db, "--catalog", short, "--offline", "--sample", "3", "--seed", "9",
                "--report", report, "--json").stdout
    check("sample: the same for the same seed", first == again and json.loads(first)["summary"]["messages"] == 3)

    # Usage errors: exit 2, nothing written.
    os.remove(report)
    for name, args, message in [
        ("no mode", ["--offline", "--online"], "--offline or --online"),
        ("online needs a configuration", ["--online"], "--online needs --config"),
        ("system prompt offline", ["--offline", "--system-prompt", "p.txt"], "they need --online"),
        ("model offline", ["--offline", "--llm-model", "m2"], "they need --online"),
        ("fallback offline", ["--offline", "--llm-fallback", "1"], "they need --online"),
        ("concurrency offline", ["--offline", "--concurrency", "2"], "they need --online"),
        ("bad day", ["--offline", "--since", "2026-02-30"], "YYYY-MM-DD"),
        ("bad limit", ["--offline", "--limit", "0"], "positive number"),
        ("seed without sample", ["--offline", "--seed", "3"], "--seed goes with --sample"),
    ]:
        r = run("replay", "--db", db, *args, "--report", report)
        check(f"usage: {name}", r.returncode == 2 and message in r.stderr, (r.returncode, r.stderr))
    r = run("replay", "--db", db, "--offline")
    check("usage: --report is required", r.returncode == 2 and "--report" in r.stderr, r.stderr)
    check("usage errors write nothing", not os.path.exists(report))

    # Failures: exit 1.
    r = run("replay", "--db", typo, "--catalog", short, "--offline", "--report", report)
    check("missing database: exit 1", r.returncode == 1 and not os.path.exists(os.path.join(tmp, "typo.db")),
          (r.returncode, r.stderr))
    r = run("replay", "--db", db, "--catalog", short, "--offline", "--report", os.path.join(tmp, "no/such/dir.md"))
    check("unwritable report: exit 1", r.returncode == 1 and "cannot write" in r.stderr, (r.returncode, r.stderr))

sys.exit(0 if all(harness.results) else 1)
