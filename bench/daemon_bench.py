#!/usr/bin/env python3
"""The daemon benchmark: signed WhatsApp webhooks through the real dispatchd, against the
zero-latency model fake and the Graph API fake, with the durable store and its audit chain
on (synchronous=FULL, every step audited). A benchmark, not a test: it fails only when the
pipeline does not deliver every message, never on timing.

Usage: daemon_bench.py BUILD_DIR SOURCE_DIR [--count N] [--concurrency C] [--runs R]
       [--starts S] [--model-concurrency M] [--model-latency-ms L] [--webhook-rate W]
       [--json FILE] [--strace FILE] [--perf FILE] [--callgrind FILE] [--overhead] [--tmpdir DIR]
       [--preload LIB] [--commit-interval-ms I] [--pin] [--model-latency-spread-ms S] [--bursts]
       [--no-limits]

--bursts keeps agent.burst_quiet_ms at dispatchd's default (each reply then waits the quiet
time); without it a build that knows the key runs with 0, a turn per message. --no-limits
turns agent.limits off (their checks' cost apart) on a build that has them.
--concurrency is the webhooks in flight from the load generator; --model-concurrency is
dispatchd's llm.max_concurrency (64, as in the tests' config). --model-latency-ms is how long
the model fake takes to answer each request (0): with it, throughput is bounded by
M / L messages per second, and the summary says how near the run came.
--model-latency-spread-ms spreads each answer's wait uniformly over L +- S (the fake's
--latency-spread-ms): with one fixed latency the answers come back in the bunches the
requests went out in, which a real model's do not. --webhook-rate
sends the webhooks open-loop at W per second (as traffic arrives), so their latency is
measured at that rate instead of at the load generator's fastest. --strace FILE attaches
`strace -c -f` to dispatchd during the load and writes its system call counts to FILE (one
run; the tracing slows dispatchd down, so its timings mean nothing then). --perf FILE
attaches `perf record -g` (the cpu-clock event, 999 Hz) to dispatchd during the load and
writes its samples to FILE, for `perf report -i FILE`: where the CPU per message goes, by
function, which two builds' profiles compare even on a busy machine. --callgrind FILE runs
dispatchd under valgrind's callgrind, counting only the load (zeroed at its start, dumped to
FILE at its end), and reports `instructions_per_message`: a count that does not move with the
machine's load as CPU time does (one run of --count 2000 takes about two minutes), so two
builds compare to the percent; `callgrind_annotate --inclusive=yes FILE` shows where.
--overhead has the load generator and both fakes keep event timelines (--timeline) and
reports dispatchd's own time per message, the model excluded (bench/overhead.py): webhook
written -> model request read, and model answer written -> Graph send read, p50/p99/max,
the messages that waited for a model slot, and the keys that did not join.
--tmpdir DIR puts each run's folder (database, WAL, timelines) in DIR instead of the system's
temporary folder: on a tmpfs (/dev/shm) fdatasync costs nothing, which separates the disk's
syncs from dispatchd's own time (nothing is durable then: a measurement, not a set-up).
--preload LIB runs dispatchd (only it) with LD_PRELOAD=LIB: another allocator tried without a
rebuild (e.g. /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 from Debian's libjemalloc2); a
preloaded allocator takes the place of the tcmalloc dispatchd links. For glibc's malloc, build
with -DDISPATCHD_TCMALLOC=OFF.
--pin puts dispatchd alone on the last CPU and everything else (the fakes, the load
generator, this script) on the others: on a 2-core machine the daemon then keeps a core and
its caches to itself, as in production where neither fake runs beside it.
--commit-interval-ms sets dispatchd's database_commit_interval_ms (left out: dispatchd's
default, 5 ms): the shortest time between two group commits under traffic.
Beside CPU and RSS it reports, per message, dispatchd's write system calls, the bytes it
wrote to storage (WAL and checkpoints) and its threads' context switches: where a paced
run's CPU goes beside the work itself. CPU and context switches are also split by thread, by
the names dispatchd gives them: `dispatchd` (the event loop), `http-client` (the model's and
the Graph API's requests), `wal-sync`, `wal-checkpoint`, `staff-reads`, `read-ahead`,
`http-listener`.

Per run, on a fresh database: the fakes alone first (the same requests dispatchd sends, at
the same concurrency, so they are shown not to be the bottleneck), then dispatchd: READY
time on a new and on an existing database (sd_notify on a test socket), idle RSS, then N
webhooks (one new sender each) with C in flight; end to end is from the first webhook to
the last reply accepted by the Graph fake (polled from the database), CPU is dispatchd's
user+system time over that window, peak RSS is VmHWM. `steady_messages_per_s` is the pace
between the polls that saw a quarter and three quarters of the replies sent: with a model
latency the whole run's count / seconds also holds the latency's start and tail.
"""
import glob
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
import harness  # noqa: E402

import overhead  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def option(name, default):
    args = sys.argv[3:]
    return type(default)(args[args.index(name) + 1]) if name in args[:-1] else default


def proc_status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0  # MiB
    return 0.0


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def thread_cpu(pid):
    """CPU seconds per thread of `pid`."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        fields = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        out[tid] = (int(fields[11]) + int(fields[12])) / TICK
    return out


# --pin: dispatchd alone on the last CPU, this script, the fakes and the load generator on the
# others (they inherit this process's CPUs). Set by main().
PINNED = {}


def pin_process(pid, cpus):
    """Every thread of `pid` onto `cpus`; threads it starts later inherit it from theirs."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            continue  # the thread ended meanwhile


def thread_names(pid):
    """Each thread's name (dispatchd names its threads: the loop keeps the process's name)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out[tid] = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
        except OSError:
            continue  # the thread ended meanwhile
    return out


def per_thread_name(before, after, names, count, scale=1.0):
    """The growth of a per-thread counter from `before` to `after`, summed by thread name and
    divided by `count`: where each message's CPU or wake-ups went, thread by thread."""
    out = {}
    for tid, value in after.items():
        name = names.get(tid, tid)
        out[name] = out.get(name, 0.0) + (value - before.get(tid, 0)) * scale / count
    return out


def thread_switches(pid):
    """Context switches (voluntary and not) per thread of `pid`."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                out[tid] = sum(int(line.split()[1]) for line in f
                               if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")))
        except OSError:
            continue  # the thread ended meanwhile
    return out


def io_and_switches(pid):
    """What the kernel counted for the whole process: write and read system calls, bytes
    written to storage, and context switches summed over its threads (each wake-up of a
    thread is one voluntary switch)."""
    out = {}
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            key, value = line.split(":")
            out[key] = int(value)
    out["switches"] = sum(thread_switches(pid).values())
    return out


def thread_schedstat(pid):
    """(ns on a CPU, ns runnable but waiting for one) per thread of `pid`."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            running, waiting, _ = open(f"/proc/{pid}/task/{tid}/schedstat").read().split()
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
        out[tid] = (int(running), int(waiting))
    return out


def knows_bursts(build):
    """Whether the build reads agent.burst_quiet_ms (an older one refuses the key): its name
    is in the binary's configuration reader. Runs turn bursts off unless --bursts is given,
    so that each webhook is answered as soon as it is taken, as before bursts; with --bursts
    every reply waits the quiet time (1.5 s), which only a steady_messages_per_s discounts."""
    with open(os.path.join(build, "daemon", "dispatchd"), "rb") as f:
        return b"burst_quiet_ms" in f.read()


def steady_rate(progress, count):
    """Replies sent per second between the polls that saw a quarter and three quarters of
    them: the run's pace without its start (the first model answers take the model's
    latency) and its end (the last ones too), which a whole run's count / seconds includes:
    at a 2 s latency a run of N messages at the 1,000/s bound is at most N / (N / 1,000 + 2) per
    second overall."""
    def first_at(share):
        return next((t, n) for t, n in progress if n >= share * count)
    (t0, n0), (t1, n1) = first_at(0.25), first_at(0.75)
    return round((n1 - n0) / (t1 - t0)) if t1 > t0 else None


def loop_steps(stack):
    """The event loop's step histogram from /metrics (dispatchd_loop_handler_seconds): steps
    run, steps over 10 and 50 ms, and the longest since start in ms; None from a build
    without it. With the durable waits' histogram (dispatchd_store_durable_wait_seconds) also
    their count, sum in seconds and how many took at most 2 ms; with the WAL syncs' histogram
    (dispatchd_store_sync_seconds, SQLite) their count and sum in seconds; with the read-ahead
    counter (dispatchd_webhook_rounds_read_ahead_total) the rounds read ahead."""
    status, text = stack.get("/metrics")
    if status != 200:
        return None
    buckets, out = {}, {}
    for line in text.splitlines():
        if line.startswith('dispatchd_loop_handler_seconds_bucket{le="'):
            le, value = line[len('dispatchd_loop_handler_seconds_bucket{le="'):].split('"} ')
            buckets[le] = int(value)
        elif line.startswith("dispatchd_loop_handler_max_seconds "):
            out["longest_ms"] = round(float(line.split()[1]) * 1000, 1)
        elif line.startswith("dispatchd_store_durable_wait_seconds_count "):
            out["waits"] = int(line.split()[1])
        elif line.startswith("dispatchd_store_durable_wait_seconds_sum "):
            out["wait_s"] = float(line.split()[1])
        elif line.startswith('dispatchd_store_durable_wait_seconds_bucket{le="0.002000"} '):
            out["waits_2ms"] = int(line.split()[1])
        elif line.startswith("dispatchd_store_sync_seconds_count "):
            out["syncs"] = int(line.split()[1])
        elif line.startswith("dispatchd_store_sync_seconds_sum "):
            out["sync_s"] = float(line.split()[1])
        elif line.startswith("dispatchd_webhook_rounds_read_ahead_total{"):
            out["read_ahead"] = out.get("read_ahead", 0) + int(line.split()[1])
    if "+Inf" not in buckets or "0.010000" not in buckets or "0.050000" not in buckets:
        return None
    out.update(steps=buckets["+Inf"], over_10ms=buckets["+Inf"] - buckets["0.010000"],
               over_50ms=buckets["+Inf"] - buckets["0.050000"])
    return out


def step_delta(before, after):
    """What loop_steps counted between two calls (the longest is since start)."""
    if before is None or after is None:
        return None
    out = {"steps": after["steps"] - before["steps"], "over_10ms": after["over_10ms"] - before["over_10ms"],
           "over_50ms": after["over_50ms"] - before["over_50ms"], "longest_since_start_ms": after["longest_ms"]}
    if all(k in d for d in (before, after) for k in ("waits", "wait_s", "waits_2ms")):
        out.update({k: after[k] - before[k] for k in ("waits", "wait_s", "waits_2ms")})
    if all(k in d for d in (before, after) for k in ("syncs", "sync_s")):
        out.update({k: after[k] - before[k] for k in ("syncs", "sync_s")})
    if all("read_ahead" in d for d in (before, after)):
        out["rounds_read_ahead"] = after["read_ahead"] - before["read_ahead"]
    return out


def load(build, mode, url, count, concurrency, **extra):
    argv = [os.path.join(build, "bench", "webhook_load"), "--mode", mode, "--url", url, "--count", str(count),
            "--concurrency", str(concurrency)]
    env = dict(os.environ)
    if mode in ("webhook", "status"):
        env["BENCH_APP_SECRET"] = harness.APP_SECRET
        argv += ["--secret-env", "BENCH_APP_SECRET", "--first-sender", str(extra.get("first_sender", 5215500000000))]
    if extra.get("status_ids"):  # mode status: a file of the wamids the reports are about
        argv += ["--status-ids", extra["status_ids"]]
    if extra.get("senders"):  # drawn from existing numbers, not one new sender per request
        argv += ["--senders", str(extra["senders"])]
    if extra.get("ids"):
        argv += ["--ids", extra["ids"]]
    if extra.get("rate"):  # open loop: this many requests a second
        argv += ["--rate", str(extra["rate"])]
    if mode == "graph":
        argv += ["--token", harness.ACCESS_TOKEN]
    if extra.get("timeline"):
        argv += ["--timeline", extra["timeline"]]
    out = subprocess.run(argv, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"webhook_load {mode} failed: {out.stdout}{out.stderr}")
    return json.loads(out.stdout)


def callgrind_dump(pid, path, count):
    """Dumps the counts callgrind gathered since it was zeroed to PATH and returns the
    instructions per message."""
    before = set(glob.glob(path + ".start*"))
    subprocess.run(["callgrind_control", "-d", str(pid)], check=True, stdout=subprocess.DEVNULL)
    dumped = [f for f in glob.glob(path + ".start*") if f not in before]
    if len(dumped) != 1:
        raise RuntimeError(f"callgrind wrote {dumped}")
    os.replace(dumped[0], path)
    with open(path) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return round(int(line.split()[1]) / count)
    raise RuntimeError(f"no totals in {path}")


def start_ready(stack, notify_path):
    """Starts dispatchd with NOTIFY_SOCKET and returns (process, seconds until READY=1)."""
    if os.path.exists(notify_path):
        os.unlink(notify_path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(notify_path)
    sock.settimeout(300 if option("--callgrind", "") else 30)
    env = dict(stack.env, NOTIFY_SOCKET=notify_path)
    if option("--preload", ""):
        env["LD_PRELOAD"] = option("--preload", "")
    started = time.perf_counter()
    # Under callgrind the counting starts at the load (callgrind_control -z), not at start-up.
    tool = (["valgrind", "-q", "--tool=callgrind", "--callgrind-out-file=" + option("--callgrind", "") + ".start"]
            if option("--callgrind", "") else [])
    daemon = harness.Process(tool + [os.path.join(stack.build, "daemon", "dispatchd"), "--config", stack.config_path],
                             env=env, name="dispatchd")
    try:
        while True:
            datagram = sock.recv(4096).decode()
            if "READY=1" in datagram.split("\n"):
                return daemon, time.perf_counter() - started
    finally:
        sock.close()


def one_run(build, source, count, concurrency, starts, model_concurrency, latency_ms=0, strace_file="", rate=0,
            timelines=False):
    with tempfile.TemporaryDirectory(prefix="dispatchd-bench-", dir=option("--tmpdir", "") or None) as workdir:
        paths = {name: os.path.join(workdir, f"timeline-{name}.txt") for name in ("fake_model", "fake_graph",
                                                                                  "webhook_load")}
        fake_args = {k: ["--timeline", paths[k]] for k in ("fake_model", "fake_graph")} if timelines else {}
        if "--model-latency-spread-ms" in sys.argv[3:-1]:
            fake_args.setdefault("fake_model", []).extend(
                ["--latency-spread-ms", str(option("--model-latency-spread-ms", 0))])
        extra_config = {"llm": {"max_concurrency": model_concurrency},
                        # the load generator's connections all come from 127.0.0.1
                        "http": {"max_connections_per_address": 512}}
        # Only when asked: a build from before the key (compare-daemon-bench.sh) refuses it.
        if "--commit-interval-ms" in sys.argv[3:-1]:
            extra_config["database_commit_interval_ms"] = option("--commit-interval-ms", 5)
        stack = harness.Stack(
            build, source, fake_args=fake_args,
            scenario=os.path.join(source, "tests", "e2e", "scenario.json"), record=False, quiet_graph=True,
            workdir=workdir, model_latency_ms=latency_ms, extra_config=extra_config,
            bursts="--bursts" in sys.argv[3:] or not knows_bursts(build),
            limits="--no-limits" not in sys.argv[3:] or not knows_bursts(build))
        try:
            result = {"count": count, "concurrency": concurrency, "llm_max_concurrency": model_concurrency,
                      "model_latency_ms": latency_ms, "model_latency_spread_ms": option("--model-latency-spread-ms", 0),
                      "webhook_rate": rate, "pinned": bool(PINNED)}
            alone = min(count, 20000) if latency_ms == 0 else 0
            # With a model latency the fakes' own speed is not the question (and the model
            # fake would take count / concurrency * latency to answer alone).
            result["fake_model_alone"] = load(build, "openai", f"http://127.0.0.1:{stack.model_port}/v1/chat/completions",
                                              alone, concurrency)["per_second"] if alone else 0
            result["fake_graph_alone"] = load(build, "graph", f"{stack.graph_url}/{harness.PHONE_NUMBER_ID}/messages",
                                              alone, concurrency)["per_second"] if alone else 0
            notify = os.path.join(workdir, "notify.sock")
            daemon, first = start_ready(stack, notify)  # creates the database, applies migrations
            result["ready_new_db_ms"] = round(first * 1000, 1)
            daemon.stop()
            readies = []
            for _ in range(starts):
                daemon, ready = start_ready(stack, notify)
                readies.append(ready * 1000)
                if len(readies) < starts:
                    daemon.stop()
            result["ready_existing_db_ms"] = round(statistics.median(readies), 1)
            stack.daemon = daemon
            pid = daemon.proc.pid
            if PINNED:
                pin_process(pid, PINNED["dispatchd"])
            time.sleep(2.0)  # a few ticks of the idle loop
            result["idle_rss_mib"] = round(proc_status(pid, "VmRSS"), 1)

            db = sqlite3.connect(f"file:{stack.db}?mode=ro", uri=True, timeout=10)
            cpu_before = cpu_seconds(pid)
            fakes_before = cpu_seconds(stack.model.proc.pid) + cpu_seconds(stack.graph.proc.pid)
            threads_before = thread_cpu(pid)
            switches_before = thread_switches(pid)
            io_before = io_and_switches(pid)
            steps_before = loop_steps(stack)
            sched_before = thread_schedstat(pid) if timelines else {}
            tracer = None
            if strace_file:
                tracer = subprocess.Popen(["strace", "-c", "-f", "-o", strace_file, "-p", str(pid)],
                                          stderr=subprocess.DEVNULL)
                time.sleep(0.5)  # attached
            elif option("--perf", ""):
                tracer = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-g",
                                           "-o", option("--perf", ""), "-p", str(pid)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(0.5)  # attached
            if option("--callgrind", ""):
                subprocess.run(["callgrind_control", "-z", str(pid)], check=True, stdout=subprocess.DEVNULL)
            started = time.perf_counter()
            # The load runs beside the polling: the end is when the last reply was accepted,
            # however long the load generator then takes to exit.
            loading = {}
            loader = threading.Thread(target=lambda: loading.update(
                acked=load(build, "webhook", stack.url("/webhooks/whatsapp"), count, concurrency, rate=rate,
                           timeline=paths["webhook_load"] if timelines else "")))
            loader.start()
            progress = []  # (seconds since the start, replies sent), one per poll
            while True:
                sent = db.execute("SELECT count(*) FROM actions WHERE status = 'sent'").fetchone()[0]
                progress.append((time.perf_counter() - started, sent))
                if sent >= count or time.perf_counter() - started > 600:
                    break
                if not loader.is_alive() and "acked" not in loading:
                    break  # the load generator failed
                time.sleep(0.02)
            elapsed = time.perf_counter() - started
            if option("--callgrind", ""):
                result["instructions_per_message"] = callgrind_dump(pid, option("--callgrind", ""), count)
            loader.join()
            if tracer:
                tracer.send_signal(signal.SIGINT)  # detaches and writes the summary
                tracer.wait()
            if "acked" not in loading:
                raise RuntimeError("webhook_load failed (see above)")
            acked = loading["acked"]
            cpu = cpu_seconds(pid) - cpu_before
            fakes = cpu_seconds(stack.model.proc.pid) + cpu_seconds(stack.graph.proc.pid) - fakes_before
            threads = thread_cpu(pid)
            switches = thread_switches(pid)
            names = thread_names(pid)
            io = io_and_switches(pid)
            steps = step_delta(steps_before, loop_steps(stack))
            busiest = max(threads[t] - threads_before.get(t, 0.0) for t in threads)
            if timelines:
                # On a shared machine a thread may be ready and get no CPU: the scheduler's
                # run-queue wait of the busiest thread (the loop's) says how much.
                sched = thread_schedstat(pid)
                deltas = {t: (run - sched_before.get(t, (0, 0))[0], wait - sched_before.get(t, (0, 0))[1])
                          for t, (run, wait) in sched.items()}
                run_ns, wait_ns = max(deltas.values())
                result["loop_thread_on_cpu_pct"] = round(100 * run_ns / 1e9 / elapsed)
                result["loop_thread_waiting_for_cpu_pct"] = round(100 * wait_ns / 1e9 / elapsed)
                result["dispatchd_waiting_for_cpu_ms_per_message"] = round(
                    sum(w for _, w in deltas.values()) / 1e6 / count, 3)
            outcomes = dict(db.execute("SELECT outcome, count(*) FROM inbox GROUP BY 1").fetchall())
            if outcomes != {"replied": count} or sent != count:
                raise RuntimeError(f"not every message was answered: {outcomes}, {sent} sent")
            result.update({
                "webhooks_acked_per_s": acked["per_second"],
                "webhook_latency_ms_p50": acked["latency_ms"]["p50"],
                "webhook_latency_ms_p99": acked["latency_ms"]["p99"],
                "messages_per_s": round(count / elapsed),
                "steady_messages_per_s": steady_rate(progress, count),
                # The bound a model latency sets: every permit busy all the time.
                "latency_bound_per_s": round(model_concurrency * 1000 / latency_ms) if latency_ms else 0,
                "cpu_ms_per_message": round(cpu * 1000 / count, 3),
                # The event loop's thread, and everything else on the machine's cores.
                "loop_thread_busy_pct": round(100 * busiest / elapsed),
                "fakes_and_load_cpu_ms_per_message": round((fakes + acked["load_cpu_seconds"]) * 1000 / count, 3),
                "peak_rss_mib": round(proc_status(pid, "VmHWM"), 1),
                # Where a paced run's CPU goes beside the work itself: each small group-commit
                # round writes its own WAL pages and wakes the syncer, each answer wakes a thread.
                "write_calls_per_message": round((io["syscw"] - io_before["syscw"]) / count, 1),
                "read_calls_per_message": round((io["syscr"] - io_before["syscr"]) / count, 1),
                "kib_written_per_message": round((io["write_bytes"] - io_before["write_bytes"]) / 1024 / count, 1),
                "context_switches_per_message": round((io["switches"] - io_before["switches"]) / count, 1),
                # The same two split by thread: the loop ("dispatchd"), the HTTP client's
                # thread, the WAL's syncer and checkpointer, the staff reads.
                "cpu_ms_per_message_by_thread": {
                    name: round(ms, 3)
                    for name, ms in sorted(per_thread_name(threads_before, threads, names, count, 1000).items())},
                "context_switches_per_message_by_thread": {
                    name: round(n, 2)
                    for name, n in sorted(per_thread_name(switches_before, switches, names, count).items())},
                "audit_events": db.execute("SELECT count(*) FROM audit").fetchone()[0],
            })
            if steps:
                # The event loop's steps during the load (/metrics): how many, and how many held
                # it for over 10 ms, the bound the daemon aims at.
                result["loop_steps_per_message"] = round(steps["steps"] / count, 1)
                result["loop_steps_over_10ms"] = steps["over_10ms"]
                result["loop_steps_over_50ms"] = steps["over_50ms"]
                result["loop_longest_step_ms"] = steps["longest_since_start_ms"]
            if steps and steps.get("waits"):
                # What the webhooks' 200s, the sends and the staff answers waited for their
                # round's COMMIT and sync: part of both ways' overhead.
                result["durable_wait_ms_mean"] = round(steps["wait_s"] * 1000 / steps["waits"], 3)
                result["durable_waits_within_2ms_pct"] = round(100 * steps["waits_2ms"] / steps["waits"], 1)
            if steps and steps.get("syncs"):
                # The disk's own part of those waits: each fdatasync of the WAL, since start.
                result["wal_sync_ms_mean"] = round(steps["sync_s"] * 1000 / steps["syncs"], 3)
                result["wal_syncs_per_message"] = round(steps["syncs"] / count, 2)
            db.close()
            code = daemon.stop()
            result["exit_code_on_sigterm"] = code
            if option("--callgrind", "") and os.path.exists(option("--callgrind", "") + ".start"):
                os.unlink(option("--callgrind", "") + ".start")  # start-up and the load, written at exit
        finally:
            stack.close()  # the fakes write their timelines as they exit
        if timelines:
            result.update(overhead.join_files(paths["webhook_load"], paths["fake_model"], paths["fake_graph"],
                                              model_concurrency))
        return result


def build_and_source(doc):
    """BUILD_DIR and SOURCE_DIR from the command line, or None after printing `doc`."""
    if len(sys.argv) < 3:
        print(doc, file=sys.stderr)
        return None
    return os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])


def main():
    dirs = build_and_source(__doc__)
    if not dirs:
        return 2
    build, source = dirs
    count, concurrency = option("--count", 20000), option("--concurrency", 64)
    runs, starts = option("--runs", 3), option("--starts", 5)
    model_concurrency = option("--model-concurrency", 64)
    latency_ms = option("--model-latency-ms", 0)
    timelines = "--overhead" in sys.argv[3:]
    if "--pin" in sys.argv[3:]:
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            print("--pin needs at least two CPUs", file=sys.stderr)
            return 2
        PINNED.update(dispatchd={cpus[-1]}, others=set(cpus[:-1]))
        os.sched_setaffinity(0, PINNED["others"])
    results = []
    for run in range(runs):
        result = one_run(build, source, count, concurrency, starts, model_concurrency, latency_ms, option("--strace", ""),
                         option("--webhook-rate", 0.0), timelines)
        print(json.dumps(result), flush=True)
        results.append(result)
    keys = ["fake_model_alone", "fake_graph_alone", "messages_per_s", "steady_messages_per_s", "webhooks_acked_per_s",
            "cpu_ms_per_message",
            "loop_thread_busy_pct", "fakes_and_load_cpu_ms_per_message",
            "idle_rss_mib", "peak_rss_mib", "write_calls_per_message", "kib_written_per_message",
            "context_switches_per_message", "ready_existing_db_ms", "ready_new_db_ms", "webhook_latency_ms_p50",
            "webhook_latency_ms_p99"]
    # From /metrics, on a build that times the loop's steps (compare-daemon-bench.sh may run one without).
    keys += [k for k in ("loop_steps_per_message", "loop_steps_over_10ms", "loop_steps_over_50ms",
                         "loop_longest_step_ms", "read_calls_per_message", "durable_wait_ms_mean",
                         "durable_waits_within_2ms_pct", "wal_sync_ms_mean", "wal_syncs_per_message")
             if all(k in r for r in results)]
    if timelines:
        keys += [f"{interval}_ms_{p}" for interval in ("webhook_to_model", "webhook_to_model_no_slot_wait",
                                                       "webhook_to_ack", "ack_to_model", "answer_to_graph")
                 for p in ("p50", "p99", "max")]
        keys += ["overhead_slot_wait_messages", "overhead_model_max_in_flight", "loop_thread_on_cpu_pct",
                 "loop_thread_waiting_for_cpu_pct", "dispatchd_waiting_for_cpu_ms_per_message"]
    # None where a run could not tell (steady_messages_per_s of a run of a few messages).
    summary = {k: statistics.median(v) if (v := [r[k] for r in results if r[k] is not None]) else None for k in keys}
    for split in ("cpu_ms_per_message_by_thread", "context_switches_per_message_by_thread"):
        names = sorted({name for r in results for name in r[split]})
        summary[split] = {name: statistics.median(r[split].get(name, 0.0) for r in results) for name in names}
    if "--json" in sys.argv[3:-1]:
        with open(option("--json", ""), "w") as f:
            json.dump({"runs": results, "median": summary}, f, indent=2)
    print(f"\nmedian of {runs} run(s), {count} messages, {concurrency} webhooks in flight, "
          f"llm.max_concurrency {model_concurrency}, model latency {latency_ms} "
          f"+- {option('--model-latency-spread-ms', 0)} ms, "
          f"database_commit_interval_ms {option('--commit-interval-ms', 'default')}:")
    if latency_ms:
        bound = model_concurrency * 1000 / latency_ms
        print(f"  {'share_of_latency_bound':34} {summary['messages_per_s'] / bound:>10.2f}   (bound {bound:.0f}/s)")
        if summary["steady_messages_per_s"]:
            print(f"  {'steady_share_of_latency_bound':34} {summary['steady_messages_per_s'] / bound:>10.2f}"
                  "   target >= 0.95")
    targets = {"messages_per_s": ">= 2000", "idle_rss_mib": "<= 35", "peak_rss_mib": "<= 70",
               "ready_existing_db_ms": "<= 100"}
    if timelines:
        targets.update({"webhook_to_model_ms_p99": "<= 2", "answer_to_graph_ms_p99": "<= 2"})
    for k in keys:
        print(f"  {k:34} {str(summary[k]):>10}   {('target ' + targets[k]) if k in targets else ''}")
    for split in ("cpu_ms_per_message_by_thread", "context_switches_per_message_by_thread"):
        print(f"  {split}: " + ", ".join(f"{name} {value}" for name, value in summary[split].items()))
    if timelines:
        unmatched = {k: sum(r["overhead_unmatched"][k] for r in results) for k in results[0]["overhead_unmatched"]}
        print(f"  overhead keys not joined (all runs): {json.dumps(unmatched)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
