#!/usr/bin/env python3
"""End-to-end on PostgreSQL: dispatchd keeps its promises while the server is down.

One dispatchd on a PostgreSQL database (its own throwaway server, tests/postgresql/
cluster.sh: this test kills it) with the fake model and Graph API. Four senders post signed
webhooks, one after another each, and redeliver every non-200 as Meta does. Two seconds in,
the server is killed (SIGKILL of the postmaster: every connection drops), and started again
OUTAGE_S later. What must hold:
  - /healthz answers 200 all along (the listener has its own thread: the loop may be
    waiting for the server), /readyz turns 503 naming the database while it is down, and
    200 again once dispatchd reconnected by itself;
  - nothing lost and nothing twice: every webhook answered 200 once is one row, and every
    message is replied to exactly once; per sender, replies follow the messages' order;
  - `dispatchctl audit verify` passes on the database.

Usage: postgresql_outage_test.py BUILD_DIR SOURCE_DIR
"""
import collections
import os
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
SENDERS = 4
OUTAGE_S = 5
TEXT = "¿Tienen envío a Monterrey?"  # the scenario answers it with enviar_mensaje to the sender


def post(stack, body, timeout=30):
    request = urllib.request.Request(stack.url("/webhooks/whatsapp"), data=body, method="POST",
                                     headers={"Content-Type": "application/json",
                                              "X-Hub-Signature-256": harness.sign(body)})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, ""
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")
    except OSError:
        return None, ""  # no answer: Meta redelivers this too


def probe(stack, path):
    started = time.monotonic()
    try:
        status, body = stack.get(path)
    except OSError:
        status, body = None, ""
    return status, body, time.monotonic() - started


def main_flow(folder):
    harness.postgresql_server("start", folder)
    database = harness.PostgresqlDatabase(folder, "outage")
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, model_latency_ms=100, database=database,
                          env_extra={"PGPASSWORD": database.password})
    try:
        stack.start_daemon()
        status, _ = post(stack, harness.text_webhook("wamid.PG.warm", "5215699999999", TEXT))
        check("before the outage: a webhook is 200", status == 200, status)

        answers = collections.Counter()  # first-try and redelivery statuses
        stored = {}  # wamid -> sender, once answered 200
        order = collections.defaultdict(list)  # sender -> wamids in the order they were stored
        health, ready = [], []
        lock = threading.Lock()
        stop = threading.Event()

        def sender(k):
            n = 0
            who = f"52156{k:02d}000000"
            while not stop.is_set():
                wamid = f"wamid.PG.{k}.{n}"
                body = harness.text_webhook(wamid, who, TEXT)
                while True:  # as Meta: until it is 200
                    status, _ = post(stack, body)
                    with lock:
                        answers[status] += 1
                    if status == 200:
                        break
                    time.sleep(0.3)
                with lock:
                    stored[wamid] = who
                    order[who].append(wamid)
                n += 1
                time.sleep(0.1)

        def prober():
            while not stop.is_set():
                health.append((time.monotonic(),) + probe(stack, "/healthz"))
                ready.append((time.monotonic(),) + probe(stack, "/readyz"))
                time.sleep(0.2)

        threads = [threading.Thread(target=sender, args=(k,), daemon=True) for k in range(SENDERS)]
        threads.append(threading.Thread(target=prober, daemon=True))
        for t in threads:
            t.start()
        time.sleep(2)
        down_at = time.monotonic()
        harness.postgresql_server("kill", folder)
        time.sleep(OUTAGE_S)
        harness.postgresql_server("start", folder)
        up_at = time.monotonic()
        stack.wait_until(lambda: ready and ready[-1][0] > up_at and ready[-1][1] == 200, timeout=60,
                         what="/readyz 200 after the server is back")
        recovered_at = time.monotonic()
        time.sleep(2)
        stop.set()
        for t in threads:
            t.join(60)

        print(f"answers to webhook deliveries: {dict(answers)}; stored {len(stored)}; "
              f"ready again {recovered_at - up_at:.1f} s after the server")
        during = [r for r in ready if down_at + 1.5 < r[0] < up_at]
        refused = [r for r in during if r[1] == 503 and "database unavailable" in r[2]]
        check("/readyz is 503 naming the database while it is down", len(refused) > 0,
              [(round(r[0] - down_at, 1), r[1], r[2].strip()) for r in during][:5])
        check("/healthz is 200 all along", all(h[1] == 200 for h in health),
              [(round(h[0] - down_at, 1), h[1]) for h in health if h[1] != 200][:5])
        print(f"/healthz: {len(health)} probes, slowest {max(h[3] for h in health) * 1000:.0f} ms "
              f"(during the outage {max([h[3] for h in health if down_at < h[0] < up_at] or [0]) * 1000:.0f} ms)")
        check("webhooks were refused during the outage", answers[503] + answers[500] > 0, dict(answers))

        wamids = set(stored) | {"wamid.PG.warm"}
        stack.wait_until(lambda: stack.scalar(
            "SELECT count(*) FROM v_actions WHERE status = 'sent'") >= len(wamids), timeout=90,
            what="every stored message replied to")
        rows = stack.query("SELECT provider_message_id, count(*) FROM v_messages GROUP BY provider_message_id")
        counts = dict(rows)
        check("every webhook answered 200 is one message", set(counts) == wamids and set(counts.values()) == {1},
              (len(counts), len(wamids), [w for w, c in counts.items() if c != 1][:5]))
        sent = stack.query("SELECT m.provider_message_id, count(*) FROM v_actions a "
                           "JOIN v_messages m ON m.message_id = a.message_id WHERE a.status = 'sent' "
                           "GROUP BY m.provider_message_id")
        check("every message replied to exactly once", dict(sent) == {w: 1 for w in wamids},
              [w for w, c in dict(sent).items() if c != 1][:5])
        graph = collections.Counter(to for to, _, _ in stack.graph_messages())
        expected = collections.Counter(stored.values())
        expected["5215699999999"] += 1
        check("the Graph API got one reply per message", graph == expected, (graph, expected))
        replies = stack.query("SELECT m.sender, m.provider_message_id FROM v_actions a "
                              "JOIN v_messages m ON m.message_id = a.message_id ORDER BY a.action_id")
        by_sender = collections.defaultdict(list)
        for who, wamid in replies:
            by_sender[who].append(wamid)
        check("per sender, replies in the order of the messages",
              all(by_sender[who] == order[who] for who in order), {w: by_sender[w][:3] for w in order})
        verified = stack.audit_verify()
        check("dispatchctl audit verify passes", verified.returncode == 0, verified.stdout + verified.stderr)
        check("dispatchd is still running", stack.daemon.proc.poll() is None, stack.daemon.proc.returncode)
    finally:
        if not all(harness.results) and stack.daemon:
            print("  dispatchd's log:\n    " + "\n    ".join(stack.daemon.lines), flush=True)
        stack.close()


sys.exit(harness.run_flows([harness.on_private_postgresql(main_flow, "dispatchd-pg-outage-")]))
