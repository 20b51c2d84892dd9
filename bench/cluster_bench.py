#!/usr/bin/env python3
"""Messages/s and CPU per message: one dispatchd on SQLite next to 1, 2 and 3 instances on
one PostgreSQL database, in one run. Numbers, not a test.

Usage: bench/cluster_bench.py BUILD_DIR SOURCE_DIR [--count N] [--concurrency C] [--listener auto|both]
                              [--repeat R]

--repeat R runs every configuration R times, the configurations taking turns, and reports
each column's median (one run on a shared VM varies by 2x).

--listener both runs each PostgreSQL configuration twice, with the HTTP listener on a thread
of its own and on the event loop (http.listener_thread own / loop; auto is own there).

Each configuration gets a fresh stack: the fake model (no latency) and the fake Graph API,
a fresh database, its instances (behind HAProxy, round robin, when there are several), and
bench/webhook_load posting N signed webhooks from N distinct senders, C at a time. Measured
from the first webhook to the last reply at the Graph fake (every action `sent`):
messages/s, the instances' CPU seconds per message (utime + stime of every dispatchd, from
/proc), and on PostgreSQL the statements and transactions per message from the server's
own counters (pg_stat_statements' calls, BEGIN and COMMIT included: with the text protocol
every call is one round trip; pg_stat_database's xact_commit). The PostgreSQL server is the
tests' throwaway one (tests/postgresql/cluster.sh, fsync off), on the same machine.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
import harness  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TICK = os.sysconf("SC_CLK_TCK")


def option(name, default):
    args = sys.argv[3:]
    return type(default)(args[args.index(name) + 1]) if name in args[:-1] else default


COUNT = option("--count", 4000)
CONCURRENCY = option("--concurrency", 64)
LISTENERS = ["own", "loop"] if option("--listener", "auto") == "both" else ["auto"]
REPEAT = option("--repeat", 1)


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def load(url):
    argv = [os.path.join(BUILD, "bench", "webhook_load"), "--mode", "webhook", "--url", url, "--count", str(COUNT),
            "--concurrency", str(CONCURRENCY), "--secret-env", "BENCH_APP_SECRET"]
    out = subprocess.run(argv, env=dict(os.environ, BENCH_APP_SECRET=harness.APP_SECRET), capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise RuntimeError(f"webhook_load failed: {out.stdout}{out.stderr}")
    return json.loads(out.stdout)


def one_run(server_dir, instances, listener="auto"):
    database = harness.PostgresqlDatabase(server_dir, f"bench{instances}{listener}") if server_dir else None
    # (a database of the same name from an earlier repetition is dropped and made anew)
    if database:
        database._psql(["-c", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"])
    stack = harness.Stack(BUILD, SOURCE, scenario=os.path.join(SOURCE, "tests", "e2e", "scenario.json"),
                          model_latency_ms=0, record=False, quiet_graph=True, database=database,
                          extra_config={"llm": {"max_concurrency": 64},
                                        **({"database_password_env": "DISPATCHD_DB_PASSWORD"} if database else {})})
    base = json.load(open(stack.config_path))
    daemons, haproxy = [], None
    try:
        ports = []
        for i in range(instances):
            config = json.loads(json.dumps(base))
            port = harness.free_port() if instances > 1 else stack.port
            config["http"]["listen"] = f"127.0.0.1:{port}"
            config["instance"] = {"id": f"bench-{i}"}
            config["http"]["listener_thread"] = listener
            path = os.path.join(stack.dir, f"instance-{i}.json")
            json.dump(config, open(path, "w"))
            daemon = harness.Process([os.path.join(BUILD, "daemon", "dispatchd"), "--config", path], env=stack.env,
                                     name=f"dispatchd-{i}")
            daemon.wait_for_line("listening on", timeout=60)
            daemons.append(daemon)
            ports.append(port)
        url = stack.url("/webhooks/whatsapp")
        if instances > 1:
            front = harness.free_port()
            cfg = os.path.join(stack.dir, "haproxy.cfg")
            with open(cfg, "w") as f:
                f.write("global\n  maxconn 4000\ndefaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n"
                        f"  timeout server 60s\nfrontend web\n  bind 127.0.0.1:{front}\n  default_backend d\n"
                        "backend d\n  balance roundrobin\n"
                        + "".join(f"  server i{i} 127.0.0.1:{p}\n" for i, p in enumerate(ports)))
            haproxy = subprocess.Popen(["haproxy", "-f", cfg, "-db"], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            url = f"http://127.0.0.1:{front}/webhooks/whatsapp"
        if database:
            database.query("SELECT pg_stat_statements_reset() IS NULL")
            commits_before = database.query("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")[0][0]
        cpu_before = sum(cpu_seconds(d.proc.pid) for d in daemons)
        started = time.monotonic()
        answered = load(url)
        stored = int(answered["statuses"].get("200", 0))  # a refused webhook is not redelivered here
        print(f"# {'postgresql' if database else 'sqlite'} x{instances} listener {listener}: webhooks answered "
              f"{answered['statuses']}", flush=True)
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sent'") >= stored,
                         timeout=120, what="every stored message replied")
        elapsed = time.monotonic() - started
        cpu = sum(cpu_seconds(d.proc.pid) for d in daemons) - cpu_before
        row = {"engine": "postgresql" if database else "sqlite", "instances": instances, "listener": listener,
               "messages_per_s": stored / elapsed, "cpu_ms_per_message": cpu * 1000 / max(stored, 1),
               "webhook_p50_ms": answered["latency_ms"]["p50"], "webhook_p99_ms": answered["latency_ms"]["p99"],
               "statuses": answered["statuses"]}
        if database:
            # Our statements only: the probes above and this one are the bench's, a handful.
            calls = database.query("SELECT sum(calls) FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid"
                                   " WHERE s.query NOT LIKE '%pg_stat%' AND s.query NOT LIKE '%row_to_json%'")[0][0]
            commits = database.query(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")[0][0] - commits_before
            row["statements_per_message"] = float(calls) / max(stored, 1)
            row["transactions_per_message"] = float(commits) / max(stored, 1)
        return row
    finally:
        for d in daemons:
            d.stop()
        if haproxy:
            haproxy.terminate()
            haproxy.wait()
        stack.close()


def median_row(runs):
    """One row of a configuration's runs: the median of each number (statuses: the last run's)."""
    row = dict(runs[-1])
    for key, value in runs[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and key != "instances":
            row[key] = statistics.median(r[key] for r in runs)
    row["runs"] = len(runs)
    return row


def main():
    configurations = [(None, 1, "auto")] + [("pg", n, listener) for n in (1, 2, 3) for listener in LISTENERS]
    runs = {c: [] for c in configurations}
    with tempfile.TemporaryDirectory(prefix="dispatchd-cluster-bench-") as server:
        try:
            harness.postgresql_server("start", server)
            data = open(os.path.join(server, "data")).read().strip()
            with open(os.path.join(data, "db", "postgresql.conf"), "a") as conf:
                conf.write("shared_preload_libraries = 'pg_stat_statements'\n")
            harness.postgresql_server("restart", server)
            for _ in range(REPEAT):
                for c in configurations:
                    runs[c].append(one_run(server if c[0] else None, c[1], c[2]))
        finally:
            harness.postgresql_server("stop", server)
    rows = [median_row(runs[c]) for c in configurations]
    load_avg = os.getloadavg()
    print(f"# {COUNT} webhooks, {CONCURRENCY} at a time, model latency 0; {os.cpu_count()} CPUs; "
          f"load average at the end {load_avg[0]:.1f}; medians of {REPEAT} run(s) per row")
    print("engine      instances  listener  messages/s  CPU ms/msg  webhook p50/p99 ms  statements/msg  transactions/msg")
    for r in rows:
        print(f"{r['engine']:<11} {r['instances']:>9}  {r['listener']:<8}  {r['messages_per_s']:>10.0f}  "
              f"{r['cpu_ms_per_message']:>10.3f}  "
              f"{r.get('webhook_p50_ms') or 0:>8.1f}/{r.get('webhook_p99_ms') or 0:<8.1f}  "
              f"{r.get('statements_per_message', 0):>14.1f}  {r.get('transactions_per_message', 0):>16.2f}")
    json.dump(rows, sys.stderr)


if __name__ == "__main__":
    main()
