#!/usr/bin/env python3
"""End-to-end: dispatchd's listener under attack, while real clients keep being served.

The attacks, each from its own loopback addresses (127.0.0.x, bound before connect):
10,000 connections opened and held idle (100 per address: past both the per-address cap of
64 and the global cap of 512), slowloris (a request line and headers dribbled a byte at a
time), a 1 GB body announced, header floods (thousands of headers, one huge header, a huge
request line), invalid UTF-8 and %-encoded garbage in paths. Meanwhile /healthz (from
127.0.0.2) must answer 200 — the target is 100 ms; the check is a generous 1 s at
the 95th percentile (see HEALTHZ_BOUND_S), the measured latencies printed — and signed
webhooks (from 127.0.0.3) must be accepted and answered. Afterwards dispatchd's RSS and open descriptors must be back near the baseline
measured before the attacks, and its peak RSS under a stated bound.

Usage: hostile_listener_test.py BUILD_DIR SOURCE_DIR
"""
import http.client
import os
import resource
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")

IDLE_CONNECTIONS = 10_000
IDLE_ADDRESSES = 100          # 127.0.0.10 .. 127.0.0.109, 100 connections each
GLOBAL_CAP = 512              # HttpLimits::max_connections
PER_ADDRESS_CAP = 64          # http.max_connections_per_address's default
FIRST_BYTE_S, READ_S = 3, 10  # HttpLimits::first_byte_timeout, read_timeout
# The target is 0.1 s. A probe's own connection queues in the kernel's accept backlog
# behind the attacker's (10,000 opened in about 0.3 s), on a machine whose two cores are shared
# with other work (the test suite runs two tests at a time): the check is the 95th percentile
# under 1 s and no probe over 3 s (a stalled loop), generous so that a slow CI machine does not
# fail it; the median, the 95th percentile and the maximum are printed against the target
# (BENCHMARKS.md, "Hostile network": within 0.1 s in every run measured since 2026-12-05).
HEALTHZ_TARGET_S = 0.1  # printed, not checked
HEALTHZ_BOUND_S = 1.0
HEALTHZ_STALL_S = 3.0
# Peak RSS: measured about 15 MiB (RelWithDebInfo) and 60 MiB (ASan) on the development
# machine; the bound leaves room for the sanitizer build and noise, and is far below what
# buffering a 1 GB body or 10,000 sessions' buffers would take.
PEAK_RSS_BOUND_KIB = 256 * 1024
RSS_TOLERANCE_KIB = 16 * 1024  # after the attacks: allocator caches may keep a little
# Under AddressSanitizer (the sanitizer build) the daemon is several times slower and freed
# memory stays in ASan's quarantine (256 MiB by default), so RSS does not come back: the
# bounds there are scaled, and say so when they apply.
ASAN_SCALE = 5
ASAN_PEAK_RSS_BOUND_KIB = 1024 * 1024
ASAN_RSS_TOLERANCE_KIB = 512 * 1024
FD_TOLERANCE = 4               # after the attacks: curl's idle connections to the fakes may differ


def proc_status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])  # kB
    return 0


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def sanitized(pid):
    with open(f"/proc/{pid}/maps") as f:
        return "libasan" in f.read()


def fd_soft_limit(pid):
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    return 0


class Client:
    """Plain HTTP requests to dispatchd from a chosen loopback source address."""

    def __init__(self, port):
        self.port = port

    def request(self, method, path, body=None, headers=None, source="127.0.0.2", timeout=20):
        started = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout, source_address=(source, 0))
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.read(), time.monotonic() - started
        finally:
            conn.close()

    def webhook(self, wamid, sender, source="127.0.0.3"):
        body = harness.text_webhook(wamid, sender, "¿Tienen envío a Monterrey?")
        status, _, _ = self.request("POST", "/webhooks/whatsapp", body,
                                    {"Content-Type": "application/json", "X-Hub-Signature-256": harness.sign(body)},
                                    source=source)
        return status


class Prober(threading.Thread):
    """/healthz every 50 ms and a signed webhook every 250 ms while an attack runs."""

    def __init__(self, client, tag):
        super().__init__(daemon=True)
        self.client, self.tag = client, tag
        self.stopped = threading.Event()
        self.health = []    # (status, seconds)
        self.webhooks = {}  # wamid -> status
        self.errors = []

    def run(self):
        n = 0
        while not self.stopped.is_set():
            try:
                status, _, seconds = self.client.request("GET", "/healthz")
                self.health.append((status, seconds))
                if n % 5 == 0:
                    wamid = f"wamid.{self.tag}.{n}"
                    self.webhooks[wamid] = self.client.webhook(wamid, f"52155{len(self.webhooks):08d}")
            except OSError as error:
                self.errors.append(repr(error))
            n += 1
            time.sleep(0.05)

    def finish(self, name):
        self.stopped.set()
        self.join()
        latencies = sorted(seconds for _, seconds in self.health)
        p95 = latencies[int(len(latencies) * 0.95)] if latencies else None
        if latencies:
            within = "within" if latencies[-1] <= HEALTHZ_TARGET_S else "NOT within"
            print(f"  {name}: /healthz {len(latencies)} probes, median {latencies[len(latencies) // 2] * 1000:.1f} ms,"
                  f" p95 {p95 * 1000:.1f} ms, max {latencies[-1] * 1000:.1f} ms"
                  f" ({within} the target's {HEALTHZ_TARGET_S * 1000:.0f} ms); webhooks {len(self.webhooks)}", flush=True)
        check(f"{name}: /healthz always 200", self.health and all(s == 200 for s, _ in self.health),
              [s for s, _ in self.health if s != 200][:10])
        check(f"{name}: /healthz within {HEALTHZ_BOUND_S} s (95th percentile, {p95})",
              p95 is not None and p95 <= HEALTHZ_BOUND_S, latencies[-5:])
        check(f"{name}: /healthz never stalled ({HEALTHZ_STALL_S} s)", latencies and latencies[-1] <= HEALTHZ_STALL_S,
              latencies[-5:])
        check(f"{name}: signed webhooks from another address answered 200",
              self.webhooks and all(s == 200 for s in self.webhooks.values()), self.webhooks)
        check(f"{name}: no probe failed to connect", not self.errors, self.errors[:5])
        return [wamid for wamid, status in self.webhooks.items() if status == 200]  # the ones promised stored


class Monitor(threading.Thread):
    """Samples dispatchd's open descriptors every 20 ms: the most it held."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.max_fds = pid, 0
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            try:
                self.max_fds = max(self.max_fds, open_fds(self.pid))
            except OSError:
                pass
            time.sleep(0.02)


def idle_flood(port):
    """Opens IDLE_CONNECTIONS from IDLE_ADDRESSES addresses; returns the sockets (held open)."""
    held, failed = [], 0
    for i in range(IDLE_CONNECTIONS):
        s = socket.socket()
        s.settimeout(5)
        try:
            # Address by address: each address's 65th connection on meets its cap, and after
            # 8 addresses the global cap is full, so each new one evicts the longest idle.
            s.bind((f"127.0.0.{10 + i * IDLE_ADDRESSES // IDLE_CONNECTIONS}", 0))
            s.connect(("127.0.0.1", port))
            held.append(s)
        except OSError:
            failed += 1
            s.close()
    return held, failed


def how_they_ended(sockets):
    """Counts how the daemon ended each held socket: (refused with 503, closed silently, still open)."""
    refused = closed = still_open = 0
    for s in sockets:
        s.setblocking(False)
        try:
            data = s.recv(4096)
            if data.startswith(b"HTTP/1.1 503"):
                refused += 1
            else:
                closed += 1
        except BlockingIOError:
            still_open += 1
        except OSError:  # reset
            closed += 1
    return refused, closed, still_open


def idle_flow(stack, client, pid, baseline_fds):
    prober = Prober(client, "IDLE")
    monitor = Monitor(pid)
    monitor.start()
    prober.start()
    started = time.monotonic()
    held, failed = idle_flood(stack.port)
    opened_s = time.monotonic() - started
    time.sleep(FIRST_BYTE_S + 2)  # held idle past the first-byte deadline
    # A slow (sanitizer) build may still be accepting the last ones: give it until its
    # descriptors are back near the baseline.
    deadline = time.time() + 30
    while time.time() < deadline and open_fds(pid) > baseline_fds + FD_TOLERANCE:
        time.sleep(0.2)
    held_s = time.monotonic() - started - opened_s
    wamids = prober.finish("10,000 idle connections")
    monitor.stopped.set()
    monitor.join()
    refused, closed, still_open = how_they_ended(held)
    print(f"  opened {len(held)} in {opened_s:.1f} s ({failed} failed to connect), held {held_s:.1f} s;"
          f" dispatchd answered 503 to"
          f" {refused}, closed {closed} silently, holds {still_open}; at most {monitor.max_fds} descriptors open",
          flush=True)
    check("idle flood: every connection was accepted by the kernel", failed == 0 and len(held) == IDLE_CONNECTIONS,
          failed)
    per_address = IDLE_ADDRESSES * (IDLE_CONNECTIONS // IDLE_ADDRESSES - PER_ADDRESS_CAP)
    check(f"idle flood: the per-address cap refused about {per_address} with 503",
          abs(refused - per_address) <= per_address // 10, refused)
    check("idle flood: dispatchd closed every idle connection (first-byte deadline or eviction)", still_open == 0,
          still_open)
    check(f"idle flood: dispatchd never held more than the cap's descriptors ({GLOBAL_CAP} + 64)",
          monitor.max_fds <= GLOBAL_CAP + 64, monitor.max_fds)
    for s in held:
        s.close()
    return wamids


def slowloris_flow(client):
    # 300 connections from 6 addresses (50 each, under both caps): a request line and then
    # one header byte per connection every 0.3 s. The read deadline (10 s for a whole
    # request) must close each of them; none gets an answer.
    prober = Prober(client, "SLOW")
    prober.start()
    sockets = []
    for i in range(300):
        s = socket.socket()
        s.bind((f"127.0.0.{120 + i % 6}", 0))
        s.connect(("127.0.0.1", client.port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        s.setblocking(False)
        sockets.append(s)
    started = time.monotonic()
    ended = {}
    answered = 0
    while len(ended) < len(sockets) and time.monotonic() - started < READ_S + 15:
        for i, s in enumerate(sockets):
            if i in ended:
                continue
            try:
                data = s.recv(4096)
                if data:
                    answered += 1
                ended[i] = time.monotonic() - started
                continue
            except BlockingIOError:
                pass
            except OSError:
                ended[i] = time.monotonic() - started
                continue
            try:
                s.send(b"a")
            except OSError:
                ended[i] = time.monotonic() - started
        time.sleep(0.3)
    wamids = prober.finish("slowloris")
    for s in sockets:
        s.close()
    times = sorted(ended.values())
    print(f"  slowloris: {len(ended)} of {len(sockets)} closed by dispatchd, after {times[0]:.1f} to {times[-1]:.1f} s"
          if times else "  slowloris: none closed", flush=True)
    check("slowloris: every dribbling connection is closed by dispatchd", len(ended) == len(sockets),
          len(sockets) - len(ended))
    check(f"slowloris: closed at the {READ_S} s read deadline (within {READ_S + 5} s)",
          times and times[-1] <= READ_S + 5, times[-3:])
    check("slowloris: none got an answer", answered == 0, answered)
    return wamids


def raw_exchange(port, data, source="127.0.0.4", then_send=0, timeout=10):
    """Sends `data` (then up to `then_send` more body bytes); returns (status or None, body bytes sent after)."""
    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    sent_after = 0
    try:
        s.sendall(data)
        chunk = b"x" * 65536
        while sent_after < then_send:
            sent_after += s.send(chunk)
    except OSError:
        pass
    status = None
    try:
        head = s.recv(4096)
        if head.startswith(b"HTTP/1.1 "):
            status = int(head[9:12])
    except OSError:
        pass
    s.close()
    return status, sent_after


def big_requests_flow(stack, pid):
    rss_before = proc_status(pid, "VmRSS")
    head = (b"POST /webhooks/whatsapp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"X-Hub-Signature-256: sha256=00\r\nContent-Length: 1000000000\r\n\r\n")
    status, sent = raw_exchange(stack.port, head, then_send=200 * 1024 * 1024)
    rss_after = proc_status(pid, "VmRSS")
    print(f"  1 GB announced: answered {status}, the client got {sent / 1e6:.1f} MB of body out before the close;"
          f" RSS {rss_before} -> {rss_after} KiB", flush=True)
    check("1 GB announced: 413 or closed", status in (413, None), status)
    check("1 GB announced: closed long before 200 MB were sent", sent < 200 * 1024 * 1024, sent)
    check("1 GB announced: the body was not buffered (RSS grew < 16 MiB)", rss_after - rss_before < 16 * 1024,
          rss_after - rss_before)

    floods = {
        "5,000 headers": b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(5000))
        + b"\r\n",
        "a 1 MiB header": b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n",
        "a 100 KiB request line": b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    }
    for name, data in floods.items():
        status, _ = raw_exchange(stack.port, data)
        check(f"header flood, {name}: 431, 400 or closed", status in (431, 400, None), status)


GARBAGE_PATHS = [
    b"/\xff\xfe\xfd", b"/webhooks/whatsapp/\xc3\x28", b"/%ff%fe%00", b"/%", b"/%zz%g1", b"/api/escalations/%00",
    b"/api/escalations/\xed\xa0\x80", b"/staff/../../../etc/passwd", b"/api/escalations/99999999999999999999999",
    b"/webhooks/whatsapp?hub.mode=%ff&hub.verify_token=%c3%28&hub.challenge=%00", b"/healthz/\xc0\xaf",
    b"/%2e%2e/%2e%2e/etc/passwd", b"//////", b"/" + b"%ff" * 2000, b"*", b"http://\xff/x",
]


def garbage_paths_flow(stack):
    statuses = []
    for path in GARBAGE_PATHS:
        for method in (b"GET", b"POST"):
            status, _ = raw_exchange(stack.port, method + b" " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 0"
                                     b"\r\nConnection: close\r\n\r\n")
            statuses.append((method + b" " + path[:40], status))
    print("  garbage paths answered:", sorted({s for _, s in statuses}, key=str), flush=True)
    check("garbage paths: every one answered (no dropped connection)", all(s is not None for _, s in statuses),
          [p for p, s in statuses if s is None])
    check("garbage paths: 400, 401, 403, 404 or 405, never 200 or 5xx",
          all(s in (400, 401, 403, 404, 405) for _, s in statuses), [(p, s) for p, s in statuses
                                                                     if s not in (400, 401, 403, 404, 405)])


def wait_settled(stack, pid, baseline_fds, timeout=30):
    """Waits until dispatchd's descriptors are back near the baseline (its sessions closed)."""
    deadline = time.time() + timeout
    while time.time() < deadline and open_fds(pid) > baseline_fds + FD_TOLERANCE:
        time.sleep(0.2)


def main_flow():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # The attacker (this process) needs its 10,000 sockets; dispatchd keeps the limit it was
    # started with, which must exceed what its cap lets it hold.
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO)
    try:
        stack.start_daemon()
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, IDLE_CONNECTIONS + 1024)), hard))
        pid = stack.daemon.proc.pid
        global HEALTHZ_BOUND_S, HEALTHZ_STALL_S, PEAK_RSS_BOUND_KIB, RSS_TOLERANCE_KIB
        if sanitized(pid):
            HEALTHZ_BOUND_S, HEALTHZ_STALL_S = HEALTHZ_BOUND_S * ASAN_SCALE, HEALTHZ_STALL_S * ASAN_SCALE
            PEAK_RSS_BOUND_KIB, RSS_TOLERANCE_KIB = ASAN_PEAK_RSS_BOUND_KIB, ASAN_RSS_TOLERANCE_KIB
            print(f"  AddressSanitizer build: /healthz bounds x{ASAN_SCALE}, peak RSS bound"
                  f" {PEAK_RSS_BOUND_KIB} KiB, RSS tolerance {RSS_TOLERANCE_KIB} KiB (quarantine)", flush=True)
        limit = fd_soft_limit(pid)
        print(f"  dispatchd's descriptor limit: {limit} (cap {GLOBAL_CAP} connections)", flush=True)
        check("dispatchd's descriptor limit exceeds its connection cap with room",
              limit >= GLOBAL_CAP + 256, limit)
        client = Client(stack.port)
        # Warm up (allocator, curl's connections to the fakes) before the baseline.
        warm = [f"wamid.WARM.{i}" for i in range(3)]
        for i, wamid in enumerate(warm):
            check(f"warm-up webhook {i}: 200", client.webhook(wamid, f"52199{i:08d}") == 200)
        settle(stack, warm)
        time.sleep(1)
        baseline_rss, baseline_fds = proc_status(pid, "VmRSS"), open_fds(pid)
        print(f"  baseline: RSS {baseline_rss} KiB, {baseline_fds} descriptors", flush=True)

        wamids = idle_flow(stack, client, pid, baseline_fds)
        wamids += slowloris_flow(client)
        big_requests_flow(stack, pid)
        garbage_paths_flow(stack)

        status, _, _ = client.request("GET", "/healthz")
        check("after the attacks: /healthz 200", status == 200, status)
        settle(stack, wamids)
        wait_settled(stack, pid, baseline_fds)
        time.sleep(1)
        rss, fds, peak = proc_status(pid, "VmRSS"), open_fds(pid), proc_status(pid, "VmHWM")
        print(f"  after: RSS {rss} KiB (baseline {baseline_rss}, tolerance {RSS_TOLERANCE_KIB}), {fds} descriptors"
              f" (baseline {baseline_fds}, tolerance {FD_TOLERANCE}); peak RSS {peak} KiB"
              f" (bound {PEAK_RSS_BOUND_KIB})", flush=True)
        check("after: open descriptors back to the baseline", fds <= baseline_fds + FD_TOLERANCE, (fds, baseline_fds))
        check("after: RSS back near the baseline", rss <= baseline_rss + RSS_TOLERANCE_KIB, (rss, baseline_rss))
        check("peak RSS under its bound", peak <= PEAK_RSS_BOUND_KIB, peak)
        check("dispatchd is still running", stack.daemon.proc.poll() is None, stack.daemon.proc.returncode)
        reports = [line for line in stack.daemon.lines if "runtime error:" in line or "Sanitizer" in line]
        check("no sanitizer report in dispatchd's output", not reports, reports[:5])
        verify = stack.audit_verify()
        check("the audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)
    finally:
        stack.close()


def settle(stack, wamids, timeout=60):
    """Waits until every webhook in `wamids` is stored and answered; checks it."""
    wanted = set(wamids)

    def replied():
        rows = stack.query("SELECT provider_message_id FROM v_messages WHERE outcome = 'replied'")
        return wanted <= {r[0] for r in rows}

    try:
        stack.wait_until(replied, timeout=timeout, what="the webhooks' replies")
    except AssertionError:
        pass
    rows = dict(stack.query("SELECT provider_message_id, outcome FROM v_messages"))
    missing = {w: rows.get(w) for w in wanted if rows.get(w) != "replied"}
    check(f"{len(wanted)} webhooks accepted: every one stored and replied", not missing, missing)


sys.exit(harness.run_flows([main_flow]))
