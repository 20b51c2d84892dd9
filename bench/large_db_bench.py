#!/usr/bin/env python3
"""The large-history benchmark: dispatchd on a database holding a long history (bench/large_db
writes one: 1M messages are about 100 days of a busy number). A benchmark, not a test: it
prints numbers and fails only when the daemon does not serve.

Usage: large_db_bench.py BUILD_DIR SOURCE_DIR DATABASE [--json FILE] [--webhooks N]
                         [--keys new|existing] [--cold] [--statuses N]

DATABASE is used in place (the daemon writes to it: a few thousand messages per run). Reported:
READY on it (sd_notify on a test socket; the first start also applies pending migrations),
`dispatchctl audit verify` time, /metrics and staff listing times, and how long the event
loop is held: a prober sends GET /healthz every 5 ms on its own connection during each phase
(idle; /metrics scraped every second; staff listings paged through; webhooks; webhooks with
/metrics every second) and reports the median, p99 and max answer time. A request or periodic
task that held the loop for X ms shows as a /healthz answer of about X ms. Each phase also
reports the loop's own count of its steps (`loop_steps`, from /metrics' histogram of handler
times on a build that has it): how many ran, how many held the loop for over 10 and 50 ms,
and the longest since the daemon started; `slow_steps_logged` holds the daemon's own log lines
naming the longest step of each 10 s that had steps over 10 ms.

--keys existing sends the webhooks from the history's own customers (bench/large_db's 50,000
WhatsApp numbers) with wamids that sort at random, as Meta's do: every insert then lands on a
random page of the inbox's indexes instead of at their right edge (the default, `new`: a new
sender and an increasing wamid per webhook). --cold empties the page cache (`sync; echo 3 >
/proc/sys/vm/drop_caches`, as root) right before each webhook phase, so those pages are read
from disk, as after a reboot; the disk reads of the event loop's thread during the phase are
reported (`loop_read_kib`).

A last phase posts N delivery-report webhooks (default 2,000; 0 skips it): "delivered" and
"read" statuses about replies the history sent, drawn at random from its actions, as Meta
sends two or three for every message a business sends.
"""
import http.client
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_bench  # noqa: E402
import harness  # noqa: E402


def option(name, default):
    args = sys.argv[4:]
    return type(default)(args[args.index(name) + 1]) if name in args[:-1] else default


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else 0.0


class Prober:
    """GET /healthz every 5 ms on one kept-alive connection; answer times in ms."""

    def __init__(self, port):
        self.port, self.times, self.stop, self.failures = port, [], threading.Event(), 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        # One request untimed first: the first one measures the connection and this Python's
        # own cold start (14.6 ms after a page-cache drop, then 0.5 ms), not the loop.
        try:
            conn.request("GET", "/healthz")
            conn.getresponse().read()
        except (OSError, http.client.HTTPException):
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        while not self.stop.is_set():
            started = time.perf_counter()
            try:
                conn.request("GET", "/healthz")
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    self.failures += 1
            except (OSError, http.client.HTTPException):
                self.failures += 1
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            self.times.append((time.perf_counter() - started) * 1000)
            time.sleep(0.005)

    def phase(self):
        """The answer times since the last call."""
        taken, self.times = self.times, []
        return {"probes": len(taken), "p50_ms": round(statistics.median(taken), 2) if taken else 0,
                "p99_ms": round(percentile(taken, 0.99), 2), "max_ms": round(max(taken, default=0), 2)}

    def close(self):
        self.stop.set()
        self.thread.join()


def timed_get(stack, path, headers=None):
    started = time.perf_counter()
    status, body = stack.get(path, headers)
    return status, body, (time.perf_counter() - started) * 1000


def scrape_every_second(stack, out, seconds=None, until=None):
    """GET /metrics every second for `seconds`, or until the Event `until` is set."""
    end = time.time() + (seconds or 0)
    while (until is not None and not until.is_set()) or (until is None and time.time() < end):
        status, _, ms = timed_get(stack, "/metrics")
        out.append(ms if status == 200 else -1)
        time.sleep(max(0.0, 1.0 - ms / 1000))


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    build, source, database = (os.path.abspath(a) for a in sys.argv[1:4])
    webhooks = option("--webhooks", 5000)
    result = {"database_bytes": os.path.getsize(database), "keys": option("--keys", "new"),
              "cold": "--cold" in sys.argv[4:]}
    stack = harness.Stack(build, source, scenario=os.path.join(source, "tests", "e2e", "scenario.json"), record=False,
                          quiet_graph=True, extra_config={"database": database,
                                                          "http": {"max_connections_per_address": 512}})
    stack.db = database
    try:
        result["messages_before"] = stack.scalar("SELECT count(*) FROM inbox")
        notify = os.path.join(stack.dir, "notify.sock")
        daemon, first = daemon_bench.start_ready(stack, notify)
        result["ready_first_start_ms"] = round(first * 1000, 1)
        daemon.stop()
        readies = []
        for _ in range(3):
            daemon, ready = daemon_bench.start_ready(stack, notify)
            readies.append(ready * 1000)
            if len(readies) < 3:
                daemon.stop()
        stack.daemon = daemon
        result["ready_ms"] = round(statistics.median(readies), 1)
        # A name of this run's own: the database is used in place, run after run.
        token = stack.add_staff(f"bench-{os.getpid()}-{int(time.time())}")
        auth = {"Authorization": f"Bearer {token}"}

        started = time.perf_counter()
        verify = stack.audit_verify()
        result["audit_verify_s"] = round(time.perf_counter() - started, 2)
        result["audit_verify_ok"] = verify.returncode == 0

        prober = Prober(stack.port)
        marks = [daemon_bench.loop_steps(stack)]

        def phase():
            """The prober's answer times and the loop's own step counts since the last phase."""
            out = prober.phase()
            marks.append(daemon_bench.loop_steps(stack))
            out["loop_steps"] = daemon_bench.step_delta(marks[-2], marks[-1])
            return out

        time.sleep(3)
        result["loop_idle"] = phase()

        scrapes = []
        scrape_every_second(stack, scrapes, seconds=10)
        result["metrics_ms"] = {"median": round(statistics.median(scrapes), 1), "max": round(max(scrapes), 1)}
        result["loop_while_scraping"] = phase()

        pages = []
        by_listing = {}  # each page's time, per listing: which one is slow, first or every
        for status_filter in ("open", "resolved", ""):
            path = "/api/escalations?limit=100" + (f"&status={status_filter}" if status_filter else "")
            for _ in range(10):  # the first ten pages of each listing
                status, body, ms = timed_get(stack, path, auth)
                if status != 200:
                    raise RuntimeError(f"{path}: {status} {body[:200]}")
                pages.append(ms)
                by_listing.setdefault(status_filter or "all", []).append(round(ms, 1))
                rows = json.loads(body)
                if len(rows) < 100:
                    break
                path = path.split("&after=")[0] + f"&after={rows[-1]['escalation_id']}"
        result["staff_page_ms"] = {"pages": len(pages), "median": round(statistics.median(pages), 1),
                                   "max": round(max(pages), 1), "by_listing": by_listing}
        first_case = json.loads(stack.get("/api/escalations?limit=1", auth)[1])[0]["escalation_id"]
        result["staff_case_ms"] = round(timed_get(stack, f"/api/escalations/{first_case}", auth)[2], 1)
        result["loop_while_paging"] = phase()

        url = stack.url("/webhooks/whatsapp")
        existing = option("--keys", "new") == "existing"
        keys = {"senders": 50000, "ids": "random"} if existing else {}
        loop_tid = str(daemon.proc.pid)  # the event loop is the process's first thread

        def loop_read_kib():
            with open(f"/proc/{daemon.proc.pid}/task/{loop_tid}/io") as f:
                return next(int(line.split()[1]) for line in f if line.startswith("read_bytes:")) // 1024

        def cold():
            if "--cold" in sys.argv[4:]:
                subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"], check=True)
            return loop_read_kib()

        read_before = cold()
        quiet = daemon_bench.load(build, "webhook", url, webhooks, 16,
                                  first_sender=34600000000 if existing else 5215600000000, **keys)
        result["webhooks_quiet"] = {"per_s": quiet["per_second"], "p50_ms": quiet["latency_ms"]["p50"],
                                    "p99_ms": quiet["latency_ms"]["p99"]}
        result["loop_under_webhooks"] = phase()
        result["loop_under_webhooks"]["loop_read_kib"] = loop_read_kib() - read_before
        scrapes = []
        done = threading.Event()
        scraper = threading.Thread(target=scrape_every_second, args=(stack, scrapes), kwargs={"until": done})
        read_before = cold()
        scraper.start()
        scraped = daemon_bench.load(build, "webhook", url, webhooks, 16,
                                    first_sender=34600000000 if existing else 5215700000000, **keys)
        done.set()
        scraper.join()
        result["webhooks_scraped"] = {"per_s": scraped["per_second"], "p50_ms": scraped["latency_ms"]["p50"],
                                      "p99_ms": scraped["latency_ms"]["p99"], "scrapes": len(scrapes)}
        result["loop_under_webhooks_and_scrapes"] = phase()
        result["loop_under_webhooks_and_scrapes"]["loop_read_kib"] = loop_read_kib() - read_before
        statuses = option("--statuses", 2000)
        if statuses:
            ids_file = os.path.join(stack.dir, "status_ids")
            with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as history:
                ids = [row[0] for row in history.execute(
                    "SELECT provider_message_id FROM actions WHERE provider_message_id IS NOT NULL"
                    " AND recipient NOT LIKE '%@%' ORDER BY random() LIMIT 5000")]
            with open(ids_file, "w") as f:
                f.write("\n".join(ids) + "\n")
            read_before = cold()
            reports = daemon_bench.load(build, "status", url, statuses, 16, status_ids=ids_file)
            result["statuses"] = {"count": statuses, "per_s": reports["per_second"],
                                  "p50_ms": reports["latency_ms"]["p50"], "p99_ms": reports["latency_ms"]["p99"]}
            result["loop_under_statuses"] = phase()
            result["loop_under_statuses"]["loop_read_kib"] = loop_read_kib() - read_before
        result["prober_failures"] = prober.failures
        prober.close()
        # The daemon names the longest of its slow steps in the log, once per 10 s at most.
        time.sleep(10)
        result["slow_steps_logged"] = [line for line in daemon.lines if "event loop:" in line]
        print(json.dumps(result, indent=2), flush=True)
        if option("--json", ""):
            with open(option("--json", ""), "w") as f:
                json.dump(result, f, indent=2)
        return 0 if result["audit_verify_ok"] else 1
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(main())
