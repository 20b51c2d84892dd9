#!/usr/bin/env python3
"""The provider breaker end to end (docs/agent.md, "The provider breaker"): the real dispatchd
with its defaults (llm.breaker: 5 failures, probes every 1 to 5 s) and llm.max_concurrency 64,
the fake Graph API, and the fake model answering 503 with Retry-After: 2 while its outage
file exists (fake_model --outage).

- the breaker opens: /metrics says so, /readyz stays 200 and names it, the log says it once,
  and the staff API's GET /api/provider (the page's header) says the provider is failing;
- SIGKILL in the outage, started again: nothing is lost;
- while it is open, 50 more customers write (5 a second): the fake model hears no more than
  the probes, one per 2 s at most (the Retry-After), however long the backlog;
- calls that waited 30 s end circuit_open and their messages are postponed;
- the outage ends: the first answer reaches Graph with the next probe (at most 5 s; the check
  allows 10 on a loaded machine), and every message is answered once within 20 s, not after its
  30 s postponement; nothing escalates.

Usage: breaker_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]


def metric(stack, name):
    status, body = stack.get("/metrics")
    if status != 200:
        return None
    match = re.search(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$", body, re.M)
    return float(match.group(1)) if match else None


def outage_requests(stack):
    return sum('"event":"outage"' in line for line in list(stack.model.lines))


def answered(stack, senders):
    to = {m[0] for m in stack.graph_messages()}
    return [s for s in senders if s in to]


def post(stack, n, prefix, senders):
    sender = f"52155{prefix}{n:05d}"
    status, _ = stack.post_webhook(harness.text_webhook(f"wamid.BRK{prefix}{n}", sender, f"Hola, soy el cliente {n}"))
    senders.append(sender)
    return status


def breaker_flow():
    stack = harness.Stack(BUILD, SOURCE)
    outage = os.path.join(stack.dir, "outage")
    stack.model.stop()
    stack.model = harness.Process([os.path.join(BUILD, "tests", "fake_model"), "--port", str(stack.model_port),
                                   "--outage", outage], name="fake_model")
    stack.model.wait_for_line('"listening"')
    senders = []
    try:
        stack.start_daemon()
        post(stack, 0, "1", senders)
        stack.wait_until(lambda: answered(stack, senders), what="the first answer")

        with open(outage, "w") as f:
            f.write("503 2\n")
        statuses = [post(stack, n, "2", senders) for n in range(1, 21)]
        check("every webhook is stored and answered 200 in the outage", set(statuses) == {200}, statuses)
        stack.wait_until(lambda: metric(stack, "dispatchd_llm_breaker_open") == 1, what="the breaker open")
        status, body = stack.get("/readyz")
        check("/readyz stays 200 and names the open breaker",
              status == 200 and "llm openai/fake-model failing: breaker open" in body, (status, body))
        stack.daemon.wait_for_line("its breaker is open")
        token = stack.add_staff("ana")
        status, body = stack.get("/api/provider", headers={"Authorization": f"Bearer {token}"})
        provider = json.loads(body) if status == 200 else {}
        check("the staff API says the provider is failing, for the page's header",
              provider.get("state") == "failing" and "is failing" in (provider.get("text") or ""), (status, body))

        # SIGKILL in the outage; started again, the new process finds the outage on its own.
        stack.daemon.stop(signal.SIGKILL)
        stack.start_daemon()
        stack.wait_until(lambda: metric(stack, "dispatchd_llm_breaker_open") == 1, what="the breaker open again")
        time.sleep(1)  # the calls in flight when it opened are answered
        before, start = outage_requests(stack), time.time()
        for n in range(21, 71):
            post(stack, n, "2", senders)
            time.sleep(0.2)
        while time.time() < start + 30:
            time.sleep(0.2)
        during = outage_requests(stack) - before
        check("while open, the failing provider hears only the probes: at most one per 2 s (Retry-After)",
              0 < during <= 30 / 2 + 1, f"{during} requests in 30 s with 50 customers writing")
        stack.wait_until(lambda: (metric(stack, "dispatchd_llm_breaker_held_out_total") or 0) >= 1,
                         what="a call that waited 30 s")
        check("no message answered during the outage", answered(stack, senders) == senders[:1],
              len(answered(stack, senders)))

        os.remove(outage)
        ended = time.time()
        first = last = None
        while time.time() < ended + 25 and (last is None):
            got = answered(stack, senders)
            if first is None and len(got) > 1:
                first = time.time() - ended
            if len(got) == len(senders):
                last = time.time() - ended
            time.sleep(0.1)
        # The next probe is at most 5 s away (llm.breaker.probe_max_ms); the bounds leave room for
        # a loaded machine and still tell a release from the 30 s postponement running out.
        check("the first answer after the outage within the next probe (5 s, 10 with room)",
              first is not None and first <= 10, first)
        check("every message answered within 20 s of the recovery, not after its 30 s wait",
              last is not None and last <= 20, (last, len(answered(stack, senders)), len(senders)))
        sent = [m[0] for m in stack.graph_messages()]
        check("each customer answered once", sorted(sent) == sorted(senders), (len(sent), len(senders)))
        check("nothing escalated", stack.scalar("SELECT count(*) FROM v_escalations") == 0)
        check("the breaker is closed again", metric(stack, "dispatchd_llm_breaker_open") == 0)
        status, body = stack.get("/metrics")
        failed = re.search(r'^dispatchd_llm_breaker_probes_total\{provider="openai",model="fake-model",result="failed"\} (\d+)$',
                           body, re.M)
        check("probes failed while it was open", failed is not None and int(failed.group(1)) >= 1, failed)
        stack.daemon.wait_for_line("answers again after")
        released = stack.daemon.wait_for_line("postponed message(s) taken again now")
        check("the messages the outage postponed were taken again at once", bool(released), released)
        status, body = stack.get("/api/provider", headers={"Authorization": f"Bearer {token}"})
        check("the staff API says it answers again", status == 200 and json.loads(body)["state"] == "answering" and
              json.loads(body)["text"] is None, (status, body))
        status, body = stack.get("/readyz")
        check("/readyz says ready without a note", status == 200 and body == "ready\n", (status, body))
        check("the audit chain verifies", stack.audit_verify().returncode == 0)
        print(f"breaker: {during} provider requests in 30 s open; first answer {first:.1f} s, last {last:.1f} s "
              "after the recovery")
    except Exception:
        print("daemon:", "\n".join(stack.daemon.lines[-30:]) if stack.daemon else "")
        raise
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(harness.run_flows([breaker_flow]))
