#!/usr/bin/env python3
"""Black-box test of `dispatchctl replay --online` and `dispatchctl eval` against the fakes.

Usage: online_replay_test.py DISPATCHCTL DISPATCHD_SEED FAKE_MODEL FAKE_GRAPH SOURCE_DIR
The seeded history (tests/support/seed.cpp) is replayed against fake_model with the WhatsApp
(fake_graph) and Gmail (fake_gmail.py) connectors of the configuration pointing at fakes that
must see no request at all. Ctrl-C (SIGINT) mid-run leaves a partial report (exit 130); the
same command again finishes the run, every message reported once. eval's exit codes gate.
With DISPATCHD_TEST_POSTGRESQL_DIR set (tests/postgresql/cluster.sh's folder) the history is
seeded into a fresh database on that server: the scratch copy is then a snapshot of it in a
SQLite file (store/tools/sqlite_snapshot.h), and the same expectations hold.
"""
import atexit
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

ctl, seed, fake_model, fake_graph, src = sys.argv[1:6]
# check() and its tally come from the end-to-end harness.
sys.path.insert(0, os.path.join(src, "tests", "e2e"))
import harness  # noqa: E402
from harness import check  # noqa: E402

SEND = '{"action":"send_message","recipient":"{sender}","content":"Thanks, we are on it.","priority":"medium"}'


def start(args):
    """Starts a fake that prints {"event":"listening","port":N} first; returns (process, port)."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    # A crash of this script must not leave a fake holding CTest's output pipe open (CTest
    # would then wait for the test's timeout).
    atexit.register(lambda: p.poll() is None and p.kill())
    first = json.loads(p.stdout.readline())
    return p, first["port"]


def requests_seen(p):
    """Stops a fake and counts the {"event":"request"} lines it printed."""
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=10)
    return sum(1 for line in out.splitlines() if line.strip() and json.loads(line).get("event") == "request")


PG_DIR = os.environ.get("DISPATCHD_TEST_POSTGRESQL_DIR")
PG_DB = f"cli_online_replay_{os.getpid()}"
LIVE_TABLES = ("inbox", "attempts", "actions", "escalations", "audit")


def pg(sql):
    subprocess.run(["bash", os.path.join(src, "tests/postgresql/cluster.sh"), "psql", PG_DIR, "-c", sql],
                   check=True, capture_output=True)


def database(tmp):
    """The seeded database's target and the configuration's database keys."""
    if not PG_DIR:
        path = os.path.join(tmp, "live.db")
        return path, {"database": path}
    base = open(os.path.join(PG_DIR, "uri")).read().strip().rsplit("/", 1)[0]
    # libpq (the seed, psql) reads PGPASSWORD; the configuration names its own variable.
    os.environ["PGPASSWORD"] = os.environ["DISPATCHD_TEST_DB_PASSWORD"] = open(
        os.path.join(PG_DIR, "password")).read().strip()
    pg(f"CREATE DATABASE {PG_DB}")
    atexit.register(pg, f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
    return f"{base}/{PG_DB}", {"database": f"{base}/{PG_DB}", "database_password_env": "DISPATCHD_TEST_DB_PASSWORD"}


def snapshot(target):
    """What a replay must not change in the live database: its rows."""
    if PG_DIR:
        return [subprocess.run(["psql", "-X", "-At", "-d", target, "-c", f"SELECT * FROM {t} ORDER BY id"],
                               check=True, capture_output=True, text=True).stdout for t in LIVE_TABLES]
    with sqlite3.connect(target) as c:
        return [c.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() for t in LIVE_TABLES]


def run(*args, timeout=120):
    return subprocess.run([ctl, *args], capture_output=True, text=True, timeout=timeout)


with tempfile.TemporaryDirectory() as tmp:
    db, db_keys = database(tmp)
    subprocess.run([seed, db], check=True, capture_output=True)
    scenario = os.path.join(tmp, "scenario.json")
    with open(scenario, "w") as f:
        json.dump({"default": [SEND]}, f)
    model, model_port = start([fake_model, "--scenario", scenario, "--latency-ms", "300"])
    graph, graph_port = start([fake_graph])
    gmail, gmail_port = start([sys.executable, os.path.join(src, "tests/fakes/fake_gmail.py")])
    os.environ.update({"FAKE_KEY": "sk-test", "WA_TOKEN": "t", "WA_SECRET": "s", "WA_VERIFY": "v",
                       "GM_ID": "i", "GM_SECRET": "s", "GM_REFRESH": "r"})
    config = os.path.join(tmp, "dispatchd.json")
    with open(config, "w") as f:
        json.dump({
            **db_keys,
            "catalog": os.path.join(src, "catalog/examples/support.en.json"),
            "migrations": {"dir": os.path.join(src, "migrations")},
            "llm": {"provider": "openai", "base_url": f"http://127.0.0.1:{model_port}/v1", "model": "fake",
                    "api_key_env": "FAKE_KEY", "max_concurrency": 1},
            "connectors": {
                "whatsapp": {"enabled": True, "graph_base_url": f"http://127.0.0.1:{graph_port}/v21.0",
                             "phone_number_id": "123", "access_token_env": "WA_TOKEN", "app_secret_env": "WA_SECRET",
                             "verify_token_env": "WA_VERIFY"},
                "gmail": {"enabled": True, "api_base_url": f"http://127.0.0.1:{gmail_port}",
                          "token_url": f"http://127.0.0.1:{gmail_port}/token", "client_id_env": "GM_ID",
                          "client_secret_env": "GM_SECRET", "refresh_token_env": "GM_REFRESH"},
            },
        }, f)
    live_before = snapshot(db)
    report = os.path.join(tmp, "replay.md")

    # Ctrl-C after a few answers: a partial report, exit 130.
    p = subprocess.Popen([ctl, "--config", config, "replay", "--online", "--report", report, "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # A few answers after the scratch copy exists (the fake answers in 300 ms, one at a time).
    for _ in range(300):
        if os.path.exists(report + ".scratch.db") or p.poll() is not None:
            break
        time.sleep(0.05)
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    check("Ctrl-C: exit 130", p.returncode == 130, (p.returncode, err))
    first = json.loads(out) if out.strip() else {}
    check("Ctrl-C: partial report", first.get("partial") is True and
          open(report).read().startswith("# Online replay (partial)\n"), first.get("summary"))
    done_first = {m["message_id"] for m in first.get("messages", [])}
    check("Ctrl-C: some messages done, some left", 0 < len(done_first) < first["summary"]["chosen"],
          first.get("summary"))
    check("the scratch copy is next to the report", os.path.exists(report + ".scratch.db"))

    # The same command again continues and finishes.
    r = run("--config", config, "replay", "--online", "--report", report, "--json")
    check("resumed: exit 0", r.returncode == 0 and "continuing the run" in r.stderr, (r.returncode, r.stderr))
    second = json.loads(r.stdout)
    ids = [m["message_id"] for m in second["messages"]]
    check("resumed: every message reported exactly once",
          len(ids) == len(set(ids)) == second["summary"]["chosen"] and done_first <= set(ids), ids)
    check("resumed: complete report", second["partial"] is False and
          open(report).read().startswith("# Online replay\n"))
    changed = [m for m in second["messages"] if m["changes"]]
    check("changed decisions counted", second["summary"]["changed"] == len(changed) > 0, second["summary"])
    check("the replayed decisions are the fake's", all(
        m["replayed"]["action"] == "send_message" for m in second["messages"] if m["status"] == "decided"))
    check("the live database is untouched", snapshot(db) == live_before)

    # eval: gating exit codes.
    good = os.path.join(tmp, "good.jsonl")
    with open(good, "w") as f:
        for sender in ("15550001", "15550002"):
            f.write(json.dumps({"channel": "whatsapp", "sender": sender, "text": "when do you open?",
                                "expected_action": "send_message",
                                "expected_fields": {"recipient": sender, "priority": "medium"}}) + "\n")
    r = run("--config", config, "eval", good, "--min-accuracy", "1")
    check("eval: all correct, exit 0", r.returncode == 0 and "2 of 2 cases correct" in r.stdout, (r.returncode, r.stderr))
    half = os.path.join(tmp, "half.jsonl")
    with open(half, "w") as f:
        f.write(open(good).readline())
        f.write(json.dumps({"channel": "gmail", "sender": "a@example.com", "text": "I want a person",
                            "must_escalate": True}) + "\n")
    evrep = os.path.join(tmp, "eval.md")
    r = run("--config", config, "eval", half, "--min-accuracy", "0.9", "--report", evrep, "--json")
    check("eval: below --min-accuracy, exit 1", r.returncode == 1 and "below --min-accuracy" in r.stderr,
          (r.returncode, r.stderr))
    check("eval: the report says 50%", json.loads(r.stdout)["accuracy"] == 0.5 and
          "| accuracy | 50.0% |" in open(evrep).read())
    r = run("--config", config, "eval", half, "--min-accuracy", "0.5")
    check("eval: at --min-accuracy, exit 0", r.returncode == 0, (r.returncode, r.stderr))
    bad = os.path.join(tmp, "bad.jsonl")
    with open(bad, "w") as f:
        f.write(open(good).readline() + "\n" + '{"channel":"whatsapp","sender":"1","text":"x"}\n')
    r = run("--config", config, "eval", bad)
    check("eval: bad set, exit 2 naming the line", r.returncode == 2 and f"{bad}:3:" in r.stderr,
          (r.returncode, r.stderr))
    r = run("--config", config, "eval", good, "--min-accuracy", "1.5")
    check("eval: bad --min-accuracy, exit 2", r.returncode == 2, (r.returncode, r.stderr))

    # Nothing reached a customer.
    check("no request reached the Graph fake", requests_seen(graph) == 0)
    check("no request reached the Gmail fake", requests_seen(gmail) == 0)
    model.send_signal(signal.SIGINT)
    model.communicate(timeout=10)

sys.exit(0 if all(harness.results) else 1)
