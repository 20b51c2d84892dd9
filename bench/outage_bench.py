#!/usr/bin/env python3
"""The provider-outage benchmark (docs/agent.md, "The provider breaker"; BENCHMARKS.md):
the real dispatchd, the Graph API fake, and the model fake made to fail by its outage file
(fake_model --outage): COUNT customers write while the model is down, the outage goes through
three phases (connections reset, then requests that time out, then 503 with Retry-After),
and then the model answers again. A benchmark, not a test: it fails only when a message is
lost, never on timing.

For each llm.max_concurrency given, it reports:
  - per phase: the requests the failing provider received, and per second (the breaker's
    target: at most 1 per second per instance, whatever the backlog);
  - from the recovery: the seconds to the first answered message and to the last;
  - dispatchd's largest RSS during the run;
  - with --fallback, a second model fake as llm.fallbacks: the messages answered during the
    outage, by the fallback, and how long after the first webhook the last of them was.

Usage: outage_bench.py BUILD_DIR SOURCE_DIR [--count N] [--concurrency C[,C...]] [--phase-s S]
       [--fallback] [--json FILE]
  --count        customers who write during the outage (20000)
  --concurrency  llm.max_concurrency values, one run each (64,1024)
  --phase-s      seconds each phase lasts (20)
"""
import json
import os
import sys
import threading
import time

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(SOURCE, "tests", "e2e"))
sys.path.insert(0, os.path.join(SOURCE, "bench"))
import harness  # noqa: E402
from daemon_bench import load, option, proc_status  # noqa: E402

PHASES = (("reset", "reset"), ("timeout", "timeout 3000"), ("503", "503 2"))


def outage_events(process):
    return sum('"event":"outage"' in line for line in list(process.lines))


def answered(stack):
    return sum('"answered":200' in line and '"type":"text"' in line for line in list(stack.graph.lines))


def one_run(count, concurrency, phase_s, fallback):
    extra = {"llm": {"max_concurrency": concurrency, "timeout_ms": 2000}}
    helper = None
    if fallback:
        port = harness.free_port()
        helper = harness.Process([os.path.join(BUILD, "tests", "fake_model"), "--port", str(port), "--no-record"],
                                 name="fake_model_fallback")
        helper.wait_for_line('"listening"')
        extra["llm"]["fallbacks"] = [{"provider": "openai", "base_url": f"http://127.0.0.1:{port}/v1",
                                      "model": "fallback-model", "api_key_env": "DISPATCHD_LLM_KEY"}]
    stack = harness.Stack(BUILD, SOURCE, record=False, extra_config=extra)
    outage = os.path.join(stack.dir, "outage")
    stack.model.stop()
    stack.model = harness.Process([os.path.join(BUILD, "tests", "fake_model"), "--port", str(stack.model_port),
                                   "--no-record", "--outage", outage], name="fake_model")
    stack.model.wait_for_line('"listening"')
    rss = [0]
    done = threading.Event()
    try:
        daemon = stack.start_daemon()

        def sample():
            while not done.is_set():
                rss[0] = max(rss[0], proc_status(daemon.proc.pid, "VmRSS"))
                time.sleep(0.5)

        threading.Thread(target=sample, daemon=True).start()
        with open(outage, "w") as f:
            f.write(PHASES[0][1] + "\n")
        load_start = time.time()
        stored = load(BUILD, "webhook", stack.url("/webhooks/whatsapp"), count, 64)
        # The requests while the webhooks came in: the failures that open the breaker.
        while_storing = outage_events(stack.model)
        phases, all_answered = [], None
        for name, content in PHASES:
            with open(outage, "w") as f:
                f.write(content + "\n")
            before, start = outage_events(stack.model), time.time()
            while time.time() < start + phase_s:
                time.sleep(0.5)
                if all_answered is None and answered(stack) >= count:
                    all_answered = time.time() - load_start
            requests = outage_events(stack.model) - before
            phases.append({"phase": name, "requests": requests, "per_second": round(requests / (time.time() - start), 2)})
        during = answered(stack)
        os.remove(outage)
        recovered = time.time()
        first = last = None
        while time.time() < recovered + 600:
            got = answered(stack)
            if first is None and got > during:
                first = time.time() - recovered
            if got >= count:
                last = time.time() - recovered
                break
            time.sleep(0.1)
        if last is None:
            raise RuntimeError(f"only {answered(stack)} of {count} messages answered 600 s after the recovery")
        return {"concurrency": concurrency, "fallback": fallback, "count": count, "stored_per_second":
                stored.get("per_second"), "webhook_statuses": stored.get("statuses"), "requests_while_storing": while_storing, "phases": phases,
                "answered_during_outage": during,
                # from the first webhook to the last message answered, when the fallback answered them all
                "all_answered_during_outage_s": None if all_answered is None else round(all_answered, 1),
                # None when nothing was left to answer at the recovery (the fallback answered all)
                "first_answer_s": None if first is None else round(first, 2), "last_answer_s": round(last, 2),
                "rss_max_mib": round(rss[0], 1)}
    finally:
        done.set()
        stack.close()
        if helper:
            helper.stop()


def main():
    count = int(option("--count", "20000"))
    phase_s = float(option("--phase-s", "20"))
    runs = []
    for concurrency in [int(c) for c in option("--concurrency", "64,1024").split(",")]:
        run = one_run(count, concurrency, phase_s, "--fallback" in sys.argv)
        print(json.dumps(run), flush=True)
        runs.append(run)
    if option("--json", ""):
        with open(option("--json", ""), "w") as f:
            json.dump({"count": count, "phase_s": phase_s, "runs": runs}, f, indent=2)


if __name__ == "__main__":
    main()
