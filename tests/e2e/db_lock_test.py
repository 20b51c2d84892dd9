#!/usr/bin/env python3
"""End-to-end: another process holds SQLite's write lock for 10 s while webhooks arrive.

A second process (python's sqlite3 in `BEGIN IMMEDIATE`, as an `sqlite3` shell in a
transaction would) takes the database's write lock for LOCK_S seconds while signed
webhooks keep arriving from four senders. What must hold: every webhook is answered (200
once stored, or a 5xx that Meta redelivers: the test redelivers each non-200 as Meta would
until it gets 200), none is lost (every 200 is a row in v_messages that is then replied
to, once), the database passes `PRAGMA integrity_check`, and `dispatchctl audit verify`
passes. The test prints what the daemon did during the lock (answers by status, the
longest wait) and /healthz's latencies meanwhile. The steps that waited are named in the
daemon's slow-step log (each 10 s: how many held the loop over 10 ms, the longest and its
handler), which the test checks.

What dispatchd does today: it waits. SQLite's busy timeout (5 s, store/database.cpp) runs
on the event loop's thread, so while the lock is held every request waits, /healthz too
(about the lock's 10 s at worst); a webhook whose BEGIN IMMEDIATE gives up after 5 s is
answered 500 and stored when redelivered. A model answer that comes back during the lock
cannot be recorded: the message is handed back and decided after the lock.

Usage: db_lock_test.py BUILD_DIR SOURCE_DIR
"""
import collections
import os
import re
import sqlite3
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
LOCK_S = 10
SENDERS = 4
MODEL_LATENCY_MS = 500
TEXT = "¿Tienen envío a Monterrey?"  # the scenario answers it with enviar_mensaje to the sender
# The daemon's slow-step log line (daemon/service_tick.cpp, log_slow_steps).
SLOW_STEPS = re.compile(r"event loop: (\d+) step\(s\) held it over 10 ms in the last 10 s; "
                        r"the longest (\d+\.\d) ms, in (.+)$")


def post(stack, body, timeout=60):
    """(status, seconds): one signed webhook delivery."""
    started = time.monotonic()
    request = urllib.request.Request(stack.url("/webhooks/whatsapp"), data=body, method="POST",
                                     headers={"Content-Type": "application/json",
                                              "X-Hub-Signature-256": harness.sign(body)})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    except OSError:
        status = None  # no answer at all: Meta redelivers this too
    return status, time.monotonic() - started


class Locker(threading.Thread):
    """Holds the write lock for LOCK_S seconds from its own connection (and so its own process
    view: SQLite locks are file locks, the daemon cannot tell it from another process)."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.locked = threading.Event()
        self.window = None

    def run(self):
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        self.locked.set()
        time.sleep(LOCK_S)
        db.execute("ROLLBACK")
        self.window = (started, time.monotonic())
        db.close()


def main_flow():
    # The model answers after MODEL_LATENCY_MS: the first message's answer comes back while
    # the lock is held and before any webhook, so recording its attempt is the first write
    # to wait out SQLite's busy timeout, and fails (the message must be handed back and
    # decided after the lock, not wait out its lease, which is 14 minutes here).
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, model_latency_ms=MODEL_LATENCY_MS)
    try:
        stack.start_daemon()
        status, _ = post(stack, harness.text_webhook("wamid.LOCK.warm", "5215699999999", TEXT))
        check("before the lock: a webhook is 200", status == 200, status)

        locker = Locker(stack.db)
        first_answers = []  # (wamid, sender, status, seconds, sent_at)
        health = []
        lock = threading.Lock()
        stop = threading.Event()

        def sender(k):
            n = 0
            while not stop.is_set():
                wamid, who = f"wamid.LOCK.{k}.{n}", f"52156{k:02d}{n:06d}"
                sent_at = time.monotonic()
                status, seconds = post(stack, harness.text_webhook(wamid, who, TEXT))
                with lock:
                    first_answers.append((wamid, who, status, seconds, sent_at))
                n += 1
                time.sleep(0.25)

        def prober():
            while not stop.is_set():
                started = time.monotonic()
                try:
                    status, _ = stack.get("/healthz")
                except OSError:
                    status = None
                health.append((status, time.monotonic() - started))
                time.sleep(0.2)

        locker.start()
        locker.locked.wait(30)
        time.sleep(2 * MODEL_LATENCY_MS / 1000)  # the first message's answer comes first
        threads = [threading.Thread(target=sender, args=(k,), daemon=True) for k in range(SENDERS)]
        threads.append(threading.Thread(target=prober, daemon=True))
        for t in threads:
            t.start()
        locker.join()
        time.sleep(2)  # and a little past the lock
        stop.set()
        for t in threads:
            t.join(120)

        during = [a for a in first_answers if a[4] < locker.window[1]]
        by_status = collections.Counter(a[2] for a in during)
        waited = max((a[3] for a in during if a[2] == 200), default=0)
        print(f"  during the {LOCK_S} s lock: {len(during)} webhooks, first answers by status {dict(by_status)},"
              f" the longest wait for a 200 {waited:.1f} s", flush=True)
        lat = sorted(s for _, s in health)
        if lat:
            print(f"  /healthz meanwhile: {len(lat)} probes, statuses {dict(collections.Counter(s for s, _ in health))},"
                  f" median {lat[len(lat) // 2] * 1000:.0f} ms, max {lat[-1] * 1000:.0f} ms", flush=True)
        check("webhooks kept arriving during the lock", len(during) >= SENDERS, len(during))
        check("every first answer is 200 or a 5xx (never 4xx)",
              all(a[2] is None or a[2] == 200 or a[2] >= 500 for a in first_answers), by_status)

        # Meta redelivers what was not answered 200, with a backoff; so does the test.
        pending = [(w, who) for w, who, status, _, _ in first_answers if status != 200]
        redelivered = collections.Counter()
        for attempt in range(10):
            if not pending:
                break
            time.sleep(1 + attempt)
            still = []
            for wamid, who in pending:
                status, _ = post(stack, harness.text_webhook(wamid, who, TEXT))
                redelivered[status] += 1
                if status != 200:
                    still.append((wamid, who))
            pending = still
        if redelivered:
            print(f"  redeliveries answered {dict(redelivered)}", flush=True)
        check("every redelivered webhook got its 200", not pending, pending)

        everyone = {w: who for w, who, _, _, _ in first_answers}
        everyone["wamid.LOCK.warm"] = "5215699999999"

        def all_replied():
            rows = stack.query("SELECT provider_message_id FROM v_messages WHERE outcome = 'replied'")
            return set(everyone) <= {r[0] for r in rows}

        try:
            stack.wait_until(all_replied, timeout=90, what="every webhook's reply")
        except AssertionError:
            pass
        rows = stack.query("SELECT provider_message_id, count(*), max(outcome) FROM v_messages GROUP BY 1")
        stored = {w: (n, outcome) for w, n, outcome in rows}
        missing = {w: stored.get(w) for w in everyone if stored.get(w) != (1, "replied")}
        check(f"none lost: all {len(everyone)} webhooks stored once and replied", not missing, missing)
        stack.wait_until(lambda: len(stack.graph_messages()) >= len(everyone), timeout=60, what="the sends")
        sends = collections.Counter(to for to, _, _ in stack.graph_messages())
        check("every sender got exactly one reply", sorted(sends) == sorted(everyone.values())
              and all(n == 1 for n in sends.values()), {k: v for k, v in sends.items() if v != 1})

        with sqlite3.connect(stack.db, timeout=30) as db:
            integrity = db.execute("PRAGMA integrity_check").fetchall()
        check("PRAGMA integrity_check: ok", integrity == [("ok",)], integrity)
        verify = stack.audit_verify()
        check("dispatchctl audit verify passes", verify.returncode == 0, verify.stdout + verify.stderr)
        check("dispatchd is still running", stack.daemon.proc.poll() is None, stack.daemon.proc.returncode)

        # The loop's steps that waited out the busy timeout are what its slow-step log is
        # for: at the end of the 10 s period that held them it names how many and the
        # longest, by handler (the period's end may come after the flow above: wait for it).
        def slow_lines():
            return [m for m in map(SLOW_STEPS.search, list(stack.daemon.lines)) if m]

        try:
            stack.wait_until(lambda: any(float(m.group(2)) >= 1000 for m in slow_lines()), timeout=25,
                             what="the slow-step log")
        except AssertionError:
            pass
        slow = slow_lines()
        for m in slow:
            print(f"  logged: {m.group(0)}", flush=True)
        check("the log names the steps that held the loop for the lock (over 1 s, with a handler)",
              any(float(m.group(2)) >= 1000 and m.group(3).strip() for m in slow), [m.group(0) for m in slow])
    finally:
        if not all(harness.results) and stack.daemon:
            print("  dispatchd's log:\n    " + "\n    ".join(line for line in stack.daemon.lines
                                                            if "queued (" not in line), flush=True)
            print("  sends at the fake Graph:\n    " + "\n    ".join(map(str, stack.graph_messages())), flush=True)
            print("  messages not replied:\n    " + "\n    ".join(map(str, stack.query(
                "SELECT * FROM v_messages WHERE outcome != 'replied'"))), flush=True)
        stack.close()


sys.exit(harness.run_flows([main_flow]))
