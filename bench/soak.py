#!/usr/bin/env python3
"""The soak: dispatchd under a steady open-loop load for a long time, against the model fake
with a latency and the Graph fake, watching for growth. A benchmark, not a test: it fails only
when messages are not all answered.

Usage: soak.py BUILD_DIR SOURCE_DIR [--minutes M] [--rate R] [--model-latency-ms L]
       [--sample-s S] [--warmup-min W] [--json FILE]

Defaults: 30 minutes at 200 webhooks/s (one new sender each, paced by webhook_load --rate),
model latency 1000 ms, a sample every 30 s, the first 5 minutes as warm-up. Each sample:
dispatchd's RSS, open descriptors, CPU seconds, replies sent so far and the database's bytes
(file + WAL). Reported: per interval CPU per message, RSS and descriptors; growth after the
warm-up (the last interval against the first after it: RSS, descriptors, CPU per message);
database bytes per message.
"""
import json
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_bench  # noqa: E402
import harness  # noqa: E402


def option(name, default):
    args = sys.argv[3:]
    return type(default)(args[args.index(name) + 1]) if name in args[:-1] else default


def db_bytes(path):
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def sample(stack, pid, started):
    return {"t_s": round(time.perf_counter() - started, 1), "rss_mib": round(daemon_bench.proc_status(pid, "VmRSS"), 1),
            "fds": len(os.listdir(f"/proc/{pid}/fd")), "cpu_s": daemon_bench.cpu_seconds(pid),
            "sent": stack.scalar("SELECT count(*) FROM actions WHERE status = 'sent'"), "db_bytes": db_bytes(stack.db)}


def growth(first, last):
    return round(100.0 * (last - first) / first, 1) if first else 0.0


def main():
    dirs = daemon_bench.build_and_source(__doc__)
    if not dirs:
        return 2
    build, source = dirs
    minutes, rate = option("--minutes", 30.0), option("--rate", 200.0)
    latency_ms, every = option("--model-latency-ms", 1000), option("--sample-s", 30.0)
    warmup_s = option("--warmup-min", 5.0) * 60
    count = int(minutes * 60 * rate)
    stack = harness.Stack(build, source, scenario=os.path.join(source, "tests", "e2e", "scenario.json"), record=False,
                          quiet_graph=True, model_latency_ms=latency_ms,
                          extra_config={"llm": {"max_concurrency": max(64, int(rate * latency_ms / 1000 * 2))},
                                        "http": {"max_connections_per_address": 512}})
    try:
        pid = stack.start_daemon().proc.pid
        time.sleep(2)
        started = time.perf_counter()
        samples = [sample(stack, pid, started)]
        loading = {}
        loader = threading.Thread(target=lambda: loading.update(acked=daemon_bench.load(
            build, "webhook", stack.url("/webhooks/whatsapp"), count, 256, rate=rate)))
        loader.start()
        while loader.is_alive():
            loader.join(timeout=every)
            samples.append(sample(stack, pid, started))
            print(json.dumps(samples[-1]), flush=True)
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM actions WHERE status = 'sent'") >= count,
                         timeout=120, what="every reply sent")
        samples.append(sample(stack, pid, started))
        intervals = []
        for a, b in zip(samples, samples[1:]):
            messages = b["sent"] - a["sent"]
            intervals.append({"t_s": b["t_s"], "messages": messages, "rss_mib": b["rss_mib"], "fds": b["fds"],
                              "cpu_ms_per_message": round((b["cpu_s"] - a["cpu_s"]) * 1000 / messages, 3)
                              if messages else None})
        steady = [i for i in intervals if i["t_s"] > warmup_s and i["messages"] >= rate * every * 0.5]
        result = {"minutes": minutes, "rate": rate, "model_latency_ms": latency_ms, "messages": count,
                  "webhooks": loading.get("acked"), "intervals": intervals}
        if len(steady) >= 2:
            first, last = steady[0], steady[-1]
            result["after_warmup"] = {
                "rss_mib": [first["rss_mib"], last["rss_mib"], growth(first["rss_mib"], last["rss_mib"])],
                "fds": [first["fds"], last["fds"], growth(first["fds"], last["fds"])],
                "cpu_ms_per_message": [first["cpu_ms_per_message"], last["cpu_ms_per_message"],
                                       growth(first["cpu_ms_per_message"], last["cpu_ms_per_message"])],
                "cpu_ms_per_message_median": statistics.median(i["cpu_ms_per_message"] for i in steady),
                "peak_rss_mib": max(i["rss_mib"] for i in steady)}
        result["db_bytes_per_message"] = round((samples[-1]["db_bytes"] - samples[0]["db_bytes"]) / count)
        print(json.dumps({k: v for k, v in result.items() if k != "intervals"}, indent=2), flush=True)
        if option("--json", ""):
            with open(option("--json", ""), "w") as f:
                json.dump(result, f, indent=2)
        return 0
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(main())
