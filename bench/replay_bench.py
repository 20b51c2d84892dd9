#!/usr/bin/env python3
"""Offline replay throughput: `dispatchctl replay --offline` over a long recorded history.
A benchmark, not a test: it prints numbers and fails only when the replay does.

Usage: replay_bench.py BUILD_DIR SOURCE_DIR [--attempts N] [--db PATH] [--runs R]

The history is written by bench/large_db (through the store's own functions): about 1.08
recorded attempts per message, so N attempts (100,000) need N / 1.08 messages. An existing
--db is reused as it is. The replay runs against a copy of catalog/examples/support.en.json
without `escalate_to_human` (4% of the history's replies change), R times (3); reported:
the median wall time, messages/s and attempts/s, CPU time per run and the peak RSS of
dispatchctl.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def option(name, default):
    args = sys.argv[3:]
    return type(default)(args[args.index(name) + 1]) if name in args[:-1] else default


def main():
    build, src = sys.argv[1], sys.argv[2]
    attempts, runs = option("--attempts", 100000), option("--runs", 3)
    work = tempfile.mkdtemp(prefix="replay-bench-")
    db = option("--db", os.path.join(work, "history.db"))
    if not os.path.exists(db):
        messages = int(attempts / 1.08) + 1
        t = time.monotonic()
        subprocess.run([os.path.join(build, "bench", "large_db"), db, str(messages)], check=True,
                       stdout=subprocess.DEVNULL)
        print(f"history: {messages} messages written in {time.monotonic() - t:.1f} s ({db})")
    with open(os.path.join(src, "catalog", "examples", "support.en.json")) as f:
        catalog = json.load(f)
    catalog["actions"] = [a for a in catalog["actions"] if a["name"] != "escalate_to_human"]
    changed = os.path.join(work, "no_escalate.json")
    with open(changed, "w") as f:
        json.dump(catalog, f)
    ctl = os.path.join(build, "cli", "dispatchctl")
    command = [ctl, "replay", "--db", db, "--catalog", changed, "--offline",
               "--report", os.path.join(work, "report.md"), "--json"]
    print("command:", " ".join(command))
    # Each replay's own rusage (wait4): RUSAGE_CHILDREN's peak would be the history writer's.
    times, cpus, peaks, summary = [], [], [], None
    for _ in range(runs):
        t = time.monotonic()
        with open(os.path.join(work, "out.json"), "w+") as out, open(os.path.join(work, "err.txt"), "w+") as err:
            child = subprocess.Popen(command, stdout=out, stderr=err)
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            times.append(time.monotonic() - t)
            out.seek(0)
            err.seek(0)
            if child.returncode != 0:
                sys.exit(f"replay failed ({child.returncode}): {err.read()}")
            summary = json.load(out)["summary"]
        cpus.append(usage.ru_utime + usage.ru_stime)
        peaks.append(usage.ru_maxrss / 1024)
    wall = statistics.median(times)
    rss_mb = max(peaks)
    cpu = statistics.mean(cpus)
    print(f"replayed {summary['messages']} messages, {summary['attempts']} attempts "
          f"({summary['checked']} checked, {summary['valid_to_refused']} valid -> refused, "
          f"{summary['refused_to_valid']} refused -> valid)")
    print(f"wall (median of {runs}): {wall:.2f} s; runs: {', '.join(f'{t:.2f}' for t in times)}")
    print(f"throughput: {summary['messages'] / wall:,.0f} messages/s, {summary['attempts'] / wall:,.0f} attempts/s; "
          f"peak RSS {rss_mb:.0f} MB")
    print(f"CPU per run (user + sys, mean): {cpu:.2f} s: {summary['messages'] / cpu:,.0f} messages per CPU second "
          f"(wall above CPU: the machine's other load, and reads from the page cache)")


if __name__ == "__main__":
    main()
