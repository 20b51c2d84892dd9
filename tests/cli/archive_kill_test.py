#!/usr/bin/env python3
"""`dispatchctl archive` killed with SIGKILL at random points, then run to the end: nothing is
lost, nothing is in both files, and both audit chains verify and link.

Usage: archive_kill_test.py DISPATCHCTL LARGE_DB SOURCE_DIR [--seed N] [--kills N]

A history of 3,000 messages over three days ending now (bench/large_db, every escalation
resolved) is archived `--before` today in batches of 10 messages; each run is killed after a
random delay (printed, with the seed, so that a failure can be replayed), drawn within half the time
a whole archive of a copy took on this machine, scaled by the share of the history still to
archive (timed first: machines differ tenfold, and a delay past the end kills nothing). Then
one run goes
to the end, meeting a write lock held past the busy timeout on its way (it retries), and the
two files are compared with the history as it was.
"""
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone

TABLES = {"inbox": "id", "attempts": "id", "actions": "id", "escalations": "id", "audit": "id"}


def option(name, default):
    args = sys.argv[4:]
    return int(args[args.index(name) + 1]) if name in args[:-1] else default


def ids(path, table):
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute(f"SELECT {TABLES[table]} FROM {table}")]


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def retention_period(ctl, source, live, tmp):
    """Neither --before nor --older-than-days: retention.days of the configuration decides the
    day (the nightly timer runs it so); without one, a usage error that names the key."""
    config = os.path.join(tmp, "dispatchd.json")
    with open(config, "w") as f:
        json.dump({"database": live, "catalog": os.path.join(source, "catalog/examples/support.en.json"),
                   "http": {"listen": "127.0.0.1:8099"},
                   "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m",
                           "api_key_env": "DISPATCHD_ARCHIVE_TEST_KEY"},
                   "retention": {"days": 2}}, f)
    migrations = os.path.join(source, "migrations")
    run = subprocess.run([ctl, "--config", config, "archive", os.path.join(tmp, "retention.db"), "--json",
                          "--migrations", migrations], capture_output=True, text=True)
    day = (datetime.now(timezone.utc) - timedelta(days=2)).strftime("%Y-%m-%d")
    if run.returncode != 0 or json.loads(run.stdout).get("before") != day:
        fail(f"retention.days 2 did not archive before {day}: exit {run.returncode} {run.stdout} {run.stderr}")
    bare = subprocess.run([ctl, "--db", live, "archive", os.path.join(tmp, "retention.db"), "--migrations",
                           migrations], capture_output=True, text=True)
    if bare.returncode != 2 or "retention.days" not in bare.stderr:
        fail(f"no day and no retention.days was not a usage error naming the key: {bare.returncode} {bare.stderr}")
    print(f"retention.days: archived before {day}; without it a usage error")


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    ctl, large_db, source = sys.argv[1:4]
    seed = option("--seed", int(time.time()))
    kills = option("--kills", 8)
    rng = random.Random(seed)
    print(f"seed {seed}, {kills} kills")
    with tempfile.TemporaryDirectory(prefix="dispatchd-archive-kill-") as tmp:
        live, archive = os.path.join(tmp, "live.db"), os.path.join(tmp, "archive.db")
        subprocess.run([large_db, live, "3000", "--per-day", "1000", "--leave-open", "no", "--migrations",
                        os.path.join(source, "migrations")], check=True, stdout=subprocess.DEVNULL)
        before = {t: sorted(ids(live, t)) for t in TABLES}
        today = datetime.now(timezone.utc).strftime("%Y-%m-%d")

        def archive_command(db, into):
            return [ctl, "--db", db, "archive", "--before", today, into, "--batch", "10",
                    "--migrations", os.path.join(source, "migrations")]

        # How long the whole archive takes here, on a copy of the history.
        probe = os.path.join(tmp, "probe.db")
        with sqlite3.connect(live) as src, sqlite3.connect(probe) as dst:
            src.backup(dst)
        started = time.monotonic()
        subprocess.run(archive_command(probe, os.path.join(tmp, "probe.archive.db")), check=True,
                       stdout=subprocess.DEVNULL)
        whole = time.monotonic() - started
        print(f"a whole archive of the copy: {whole:.3f}s")
        command = archive_command(live, archive)

        def to_archive():
            with sqlite3.connect(live) as db:
                return db.execute("SELECT count(*) FROM inbox WHERE received_at < ?", (today,)).fetchone()[0]

        history = to_archive()
        killed = 0
        for i in range(kills):
            delay = rng.uniform(0.02, max(0.05, 0.5 * whole * to_archive() / history))
            run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(delay)
            if run.poll() is None:
                run.send_signal(signal.SIGKILL)
                killed += 1
            out, err = run.communicate()
            print(f"run {i + 1}: delay {delay:.3f}s, {'killed' if run.returncode == -9 else 'exit %d' % run.returncode}"
                  f" {out.strip()} {err.strip()}")
            if run.returncode not in (0, -9):
                fail(f"an interrupted series run failed: {err}")
        if killed == 0:
            fail("no run was killed: the history is too small for this machine")
        # The last run meets a writer that holds the live write lock past the busy timeout
        # (5 s): it runs again after a pause instead of giving up.
        holder = sqlite3.connect(live, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        final = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(7)
        holder.execute("COMMIT")
        holder.close()
        out, err = final.communicate()
        print("final:", out.strip(), err.strip())
        if final.returncode != 0:
            fail("the final run failed")
        if "busy, retrying in 1 s (1 of 5)" not in err:
            fail("the final run did not meet the held lock, or did not retry: " + err)
        for table in TABLES:
            in_live, in_archive = ids(live, table), ids(archive, table)
            both = set(in_live) & set(in_archive)
            if both:
                fail(f"{table}: {len(both)} rows in both files, e.g. {sorted(both)[:5]}")
            if sorted(in_live + in_archive) != before[table]:
                fail(f"{table}: live + archive ({len(in_live)} + {len(in_archive)}) is not the history "
                     f"({len(before[table])} rows)")
            print(f"{table}: {len(in_live)} live + {len(in_archive)} archived = {len(before[table])}, each once")
        if len(ids(archive, "inbox")) < 1000:
            fail("less than a third of the history was archived")
        verify = subprocess.run([ctl, "--db", live, "audit", "verify", "--archive", archive], capture_output=True,
                                text=True)
        print(verify.stdout.strip())
        if verify.returncode != 0 or "link: ok" not in verify.stdout:
            fail("the chains do not verify: " + verify.stderr)
        # Tampering with an archived event is seen, and named.
        with sqlite3.connect(archive) as db:
            victim = db.execute("SELECT id FROM audit ORDER BY id LIMIT 1 OFFSET 100").fetchone()[0]
            db.execute("DELETE FROM audit WHERE id = ?", (victim,))
        tampered = subprocess.run([ctl, "--db", live, "audit", "verify", "--archive", archive], capture_output=True,
                                  text=True)
        print(tampered.stdout.strip())
        if tampered.returncode != 1 or f"archive: BROKEN at audit id {victim + 1}" not in tampered.stdout:
            fail("a deleted archived event was not detected")
        retention_period(ctl, source, live, tmp)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
