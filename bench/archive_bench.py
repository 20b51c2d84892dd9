#!/usr/bin/env python3
"""The retention benchmark: `dispatchctl archive` on a long history while dispatchd runs and
takes webhooks, and the webhooks' latency meanwhile. A benchmark, not a test: it prints numbers
and fails only when the archive or the chains fail.

Usage: archive_bench.py BUILD_DIR SOURCE_DIR DATABASE [--before YYYY-MM-DD] [--rate R]
                        [--batch N] [--pause-ms N] [--commit-interval-ms N] [--json FILE]

DATABASE is archived in place (make a copy first); the archive is written to DATABASE.archive.db
(replaced). bench/large_db writes a history: 170,000 messages are 1,048,900 audit events (1,029,618 before today)
  build/bench/large_db /tmp/h.db 170000 --leave-open no
Phases: webhooks alone (open loop, --rate a second, 20 s: the baseline), then the same load
while `archive --before DAY` (default today, UTC: the whole history but today) runs with
--batch (500) and --pause-ms (0); the load runs in 5-second slices until the archive ends,
each slice's p50/p99/max reported. Then `audit verify --archive` (timed).
"""
import json
import os
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_bench  # noqa: E402
import harness  # noqa: E402


def option(name, default):
    args = sys.argv[4:]
    return type(default)(args[args.index(name) + 1]) if name in args[:-1] else default


def summary(run):
    return {"answered": run["answered"], "statuses": run["statuses"], "per_s": run["per_second"],
            "p50_ms": run["latency_ms"]["p50"], "p99_ms": run["latency_ms"]["p99"], "max_ms": run["latency_ms"]["max"]}


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    build, source, database = (os.path.abspath(a) for a in sys.argv[1:4])
    rate, batch, pause = option("--rate", 50), option("--batch", 500), option("--pause-ms", 0)
    before = option("--before", datetime.now(timezone.utc).strftime("%Y-%m-%d"))
    archive = database + ".archive.db"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(archive + suffix):
            os.unlink(archive + suffix)
    extra = {"database": database, "http": {"max_connections_per_address": 512}}
    if option("--commit-interval-ms", -1) >= 0:  # the daemon's default unless given
        extra["database_commit_interval_ms"] = option("--commit-interval-ms", -1)
    stack = harness.Stack(build, source, scenario=os.path.join(source, "tests", "e2e", "scenario.json"), record=False,
                          quiet_graph=True, extra_config=extra)
    stack.db = database
    result = {"database_bytes": os.path.getsize(database), "rate": rate, "batch": batch, "pause_ms": pause,
              "before": before}
    try:
        result["messages_before"] = stack.scalar("SELECT count(*) FROM inbox")
        result["audit_events_before"] = stack.scalar("SELECT count(*) FROM audit")
        daemon, _ = daemon_bench.start_ready(stack, os.path.join(stack.dir, "notify.sock"))
        stack.daemon = daemon
        url = stack.url("/webhooks/whatsapp")
        result["webhooks_alone"] = summary(daemon_bench.load(build, "webhook", url, rate * 20, 16, rate=rate,
                                                             first_sender=5215600000000))
        slices, done = [], threading.Event()

        def load_until_done():
            sender = 5215700000000
            while not done.is_set():
                slices.append(summary(daemon_bench.load(build, "webhook", url, rate * 5, 16, rate=rate,
                                                        first_sender=sender)))
                sender += 100000

        loader = threading.Thread(target=load_until_done)
        loader.start()
        time.sleep(2)
        started = time.perf_counter()
        run = stack.dispatchctl("archive", "--before", before, archive, "--batch", str(batch), "--pause-ms",
                                str(pause), "--json")
        result["archive_s"] = round(time.perf_counter() - started, 1)
        done.set()
        loader.join()
        if run.returncode != 0:
            raise RuntimeError(f"archive failed: {run.stdout}{run.stderr}")
        result["archive"] = json.loads(run.stdout)
        result["audit_events_per_s"] = round(result["archive"]["audit_events"] / max(result["archive_s"], 0.001))
        result["webhooks_during_archive"] = slices
        result["webhooks_during_archive_worst_p99_ms"] = max((s["p99_ms"] for s in slices), default=0)
        started = time.perf_counter()
        verify = stack.dispatchctl("audit", "verify", "--archive", archive)
        result["verify_s"] = round(time.perf_counter() - started, 1)
        result["verify"] = verify.stdout.strip().splitlines()
        result["verify_ok"] = verify.returncode == 0
        print(json.dumps(result, indent=2), flush=True)
        if option("--json", ""):
            with open(option("--json", ""), "w") as f:
                json.dump(result, f, indent=2)
        return 0 if result["verify_ok"] else 1
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(main())
