#!/usr/bin/env python3
"""End-to-end: three dispatchd instances on one PostgreSQL database behind HAProxy.

Debian's haproxy balances round robin over three instances (its health check is /readyz),
which share the fake model and the fake Graph API and a PostgreSQL server of their own
(tests/postgresql/cluster.sh: this test restarts it). SENDERS senders post MESSAGES signed
webhooks in all, one after another per sender, and redeliver every non-200 as Meta does.
Meanwhile random instances are SIGKILLed (at least KILLS times) and started again, and the
PostgreSQL server is restarted once. Some messages escalate (the scenario's "factura"), and
staff resolve them through each instance in turn. What must hold:
  - nothing lost: every webhook answered 200 is one message, and each ends with one
    outcome (replied, or escalated: a send cut by a SIGKILL is `delivery_unknown`, never
    sent again);
  - no duplicate send: the Graph API gets at most one send per message;
  - per sender, the order of the messages is the order of their replies;
  - `dispatchctl audit verify` passes; every staff resolution made through any instance
    is in the audit trail.

Usage: cluster_test.py BUILD_DIR SOURCE_DIR [MESSAGES]
"""
import collections
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
MESSAGES = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
INSTANCES = 3
SENDERS = 40
KILLS = 20
ESCALATING_EVERY = 25  # every 25th message of a sender asks about a "factura": it escalates
TEXT = "¿Tienen envío a Monterrey?"
ESCALATING = "Necesito mi factura"


def post(url, body, timeout=30):
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json",
                                              "X-Hub-Signature-256": harness.sign(body)})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None  # no answer: Meta redelivers this too


class Deployment:
    """The stack's fakes and database, INSTANCES daemons on it and HAProxy in front."""

    def __init__(self, folder):
        self.folder = folder
        self.database = harness.PostgresqlDatabase(folder, "cluster")
        self.stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, model_latency_ms=50, database=self.database,
                                   quiet_graph=False,
                                   extra_config={"database_password_env": "DISPATCHD_DB_PASSWORD",
                                                 "cluster": {"dead_after_s": 5}})
        base = json.load(open(self.stack.config_path))
        self.ports = [harness.free_port() for _ in range(INSTANCES)]
        self.configs = []
        for i, port in enumerate(self.ports):
            config = json.loads(json.dumps(base))
            config["http"]["listen"] = f"127.0.0.1:{port}"
            config["instance"] = {"id": f"instance-{i}"}
            path = os.path.join(self.stack.dir, f"instance-{i}.json")
            with open(path, "w") as f:
                json.dump(config, f, indent=2)
            self.configs.append(path)
        self.daemons = [None] * INSTANCES
        self.lines = [[] for _ in range(INSTANCES)]  # every instance's log, across restarts
        self.front = harness.free_port()
        haproxy_cfg = os.path.join(self.stack.dir, "haproxy.cfg")
        with open(haproxy_cfg, "w") as f:
            f.write("global\n  maxconn 2000\n"
                    "defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  timeout server 60s\n"
                    "  retries 3\n  option redispatch\n  retry-on conn-failure empty-response response-timeout\n"
                    f"frontend web\n  bind 127.0.0.1:{self.front}\n  default_backend dispatchd\n"
                    "backend dispatchd\n  balance roundrobin\n  option httpchk GET /readyz\n"
                    "  default-server inter 500ms fall 2 rise 1\n"
                    + "".join(f"  server i{i} 127.0.0.1:{port} check\n" for i, port in enumerate(self.ports)))
        self.haproxy = subprocess.Popen(["haproxy", "-f", haproxy_cfg, "-db"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)

    def start(self, i):
        process = harness.Process([os.path.join(BUILD, "daemon", "dispatchd"), "--config", self.configs[i]],
                                  env=self.stack.env, name=f"dispatchd-{i}")
        process.lines = self.lines[i]  # one list across restarts
        self.daemons[i] = process
        process.wait_for_line("listening on", timeout=60)

    def kill(self, i):
        self.daemons[i].proc.send_signal(signal.SIGKILL)
        self.daemons[i].proc.wait()

    def url(self, path, instance=None):
        port = self.front if instance is None else self.ports[instance]
        return f"http://127.0.0.1:{port}{path}"

    def close(self):
        for d in self.daemons:
            if d:
                d.stop()
        self.haproxy.terminate()
        self.haproxy.wait()
        self.stack.close()


def staff_call(deployment, instance, method, path, token, body=None):
    return harness.bearer_call(deployment.url(path, instance), method, token, body)


def main_flow(folder):
    harness.postgresql_server("start", folder)
    deployment = Deployment(folder)
    stack = deployment.stack
    try:
        for i in range(INSTANCES):
            deployment.start(i)
        token = stack.add_staff("ana")
        stored = {}  # wamid -> sender
        order = collections.defaultdict(list)
        answers = collections.Counter()
        lock = threading.Lock()
        per_sender = MESSAGES // SENDERS

        def sender(k):
            who = f"52157{k:03d}00000"
            for n in range(per_sender):
                wamid = f"wamid.CL.{k}.{n}"
                text = ESCALATING if n % ESCALATING_EVERY == ESCALATING_EVERY - 1 else TEXT
                body = harness.text_webhook(wamid, who, text)
                while True:
                    status = post(deployment.url("/webhooks/whatsapp"), body)
                    with lock:
                        answers[status] += 1
                    if status == 200:
                        break
                    time.sleep(0.2)
                with lock:
                    stored[wamid] = who
                    order[who].append(wamid)

        kills = []
        done = threading.Event()

        def chaos():
            rng = random.Random(16)
            restarted_pg = False
            while not done.is_set() or len(kills) < KILLS:
                time.sleep(rng.uniform(0.5, 1.5))
                i = rng.randrange(INSTANCES)
                deployment.kill(i)
                kills.append((time.monotonic(), i))
                time.sleep(rng.uniform(0.1, 1.0))
                deployment.start(i)
                if not restarted_pg and len(kills) == KILLS // 2:
                    harness.postgresql_server("restart", folder)
                    restarted_pg = True

        senders = [threading.Thread(target=sender, args=(k,), daemon=True) for k in range(SENDERS)]
        chaos_thread = threading.Thread(target=chaos, daemon=True)
        started = time.monotonic()
        chaos_thread.start()
        for t in senders:
            t.start()
        for t in senders:
            t.join(1800)
        done.set()
        chaos_thread.join(600)
        print(f"{len(stored)} webhooks stored in {time.monotonic() - started:.0f} s; deliveries answered "
              f"{dict(answers)}; {len(kills)} SIGKILLs", flush=True)
        check(f"at least {KILLS} SIGKILLs", len(kills) >= KILLS, len(kills))
        check("every webhook was finally answered 200", len(stored) == per_sender * SENDERS, len(stored))

        # Every message ends with one outcome: replied, or escalated.
        stack.wait_until(lambda: stack.scalar(
            "SELECT count(*) FROM v_messages WHERE outcome IS NULL OR outcome = ''") == 0, timeout=300,
            what="every message decided")
        counts = dict(stack.query("SELECT provider_message_id, count(*) FROM v_messages GROUP BY 1"))
        check("every stored webhook is one message", set(counts) == set(stored) and set(counts.values()) == {1},
              (len(counts), len(stored)))

        # Staff resolve the escalations, through each instance in turn. A 503 (the store busy,
        # e.g. a deadlock PostgreSQL ended, or the database unreachable) is retried, as the staff
        # page does; a lost answer is retried too, and a 409 then means the first try stored it.
        open_ids = [row[0] for row in stack.query(
            "SELECT escalation_id FROM v_escalations WHERE status = 'open' ORDER BY escalation_id")]
        resolved_through = collections.Counter()
        retried = collections.Counter()
        refused = []
        for n, escalation in enumerate(open_ids):
            instance = n % INSTANCES
            deadline = time.monotonic() + 60
            while True:
                status, body = staff_call(deployment, instance, "POST", f"/api/escalations/{escalation}/dismiss", token,
                                          {"note": f"through instance {instance}"})
                if status == 200 or (status == 409 and retried[escalation] > 0):
                    resolved_through[instance] += 1
                    break
                if status not in (503, None) or time.monotonic() > deadline:
                    refused.append((escalation, instance, status, str(body)[:200]))
                    break
                retried[escalation] += 1
                time.sleep(0.5)
        if retried:
            print(f"  {len(retried)} dismissals retried ({sum(retried.values())} tries)", flush=True)
        check("every escalation dismissed through the instance asked, each instance used",
              refused == [] and len(open_ids) > 0 and all(resolved_through[i] > 0 for i in range(INSTANCES)),
              (refused[:5], dict(resolved_through)))
        recorded = stack.scalar("SELECT count(*) FROM v_audit WHERE event = 'staff_dismissed'")
        check("every staff resolution is in the audit trail, once", recorded == len(open_ids),
              (recorded, len(open_ids)))

        # No duplicate send; replies in each sender's order.
        graph = collections.Counter(wamid for _, _, wamid in stack.graph_messages())
        check("the Graph API never got a message twice", all(c == 1 for c in graph.values()),
              [w for w, c in graph.items() if c > 1][:5])
        sends = stack.query("SELECT m.provider_message_id, count(*) FROM v_actions a JOIN v_messages m "
                            "ON m.message_id = a.message_id WHERE a.status IN ('sent', 'sending', 'delivery_unknown') "
                            "GROUP BY 1 HAVING count(*) > 1")
        check("no message has two sends", sends == [], sends[:5])
        replies = stack.query("SELECT m.sender, m.provider_message_id FROM v_actions a JOIN v_messages m "
                              "ON m.message_id = a.message_id WHERE a.created_by = 'agent' ORDER BY a.action_id")
        by_sender = collections.defaultdict(list)
        for who, wamid in replies:
            by_sender[who].append(wamid)
        out_of_order = [who for who in order
                        if by_sender[who] != [w for w in order[who] if w in set(by_sender[who])]]
        check("per sender, replies in the order of the messages", out_of_order == [], out_of_order[:3])
        verified = stack.audit_verify()
        check("dispatchctl audit verify passes", verified.returncode == 0, verified.stdout + verified.stderr)
    finally:
        if not all(harness.results):
            for i, lines in enumerate(deployment.lines):
                print(f"  instance {i}'s log (last 40 lines):\n    " + "\n    ".join(lines[-40:]), flush=True)
        deployment.close()


sys.exit(harness.run_flows([harness.on_private_postgresql(main_flow, "dispatchd-cluster-")]))
