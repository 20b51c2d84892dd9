#!/usr/bin/env python3
"""End-to-end: escalation notifications (escalation.notify_url) from the real dispatchd to
fake_hook.py on 127.0.0.1. The fake model fails the contract three times for a message
about a "factura" (tests/e2e/scenario.json), which makes a contract_failed escalation.

What must hold: one POST per escalation with its id, reason, channel and link; a 500 is
retried after the backoff and the notification then arrives once; nothing is lost across a
restart (receiver down when the escalation happens, SIGTERM, restart, receiver up: delivered
exactly once); escalations from before the first start with a notify_url are not announced;
a case left open past its response-time target is recorded and announced as breached once.
Each check prints pass/FAIL; exit 1 when any failed.

Usage: notify_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import signal
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
HOOK = os.path.join(SOURCE, "tests", "fakes", "fake_hook.py")
PUBLIC_URL = "https://support.example.com"
FACTURA = "Necesito la factura de octubre\nes urgente"
check = harness.check


class Hook:
    """fake_hook.py on `port` (0: any free one)."""

    def __init__(self, port=0):
        self.proc = harness.Process([sys.executable, HOOK, "--port", str(port)], name="fake_hook")
        self.port = json.loads(self.proc.wait_for_line('"listening"'))["port"]

    def url(self):
        return f"http://127.0.0.1:{self.port}/hooks/T000/B000/secret"

    def _call(self, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def posts(self):
        return self._call("/_fake/state")["posts"]

    def fail(self, status, count=1):
        self._call("/_fake/fail", {"status": status, "count": count})

    def stop(self):
        self.proc.stop()


def stack_for(url, extra=None):
    config = {"escalation": {"notify_url": url}, "staff": {"public_url": PUBLIC_URL}}
    return harness.Stack(BUILD, SOURCE, scenario=SCENARIO, extra_config=harness.merge(config, extra or {}))


def escalate(stack, wamid, sender):
    status, body = stack.post_webhook(harness.text_webhook(wamid, sender, FACTURA))
    if status != 200:
        raise AssertionError(f"webhook answered {status}: {body}")


def escalation_ids(stack):
    return [row[0] for row in stack.query("SELECT escalation_id FROM v_escalations ORDER BY escalation_id")]


def metric(stack, sample):
    _, text = stack.get("/metrics")
    for line in text.splitlines():
        if line.startswith(sample + " "):
            return int(line.split()[-1])
    return None


def two_escalations_flow():
    hook = Hook()
    stack = stack_for(hook.url())
    try:
        stack.start_daemon()
        escalate(stack, "wamid.N1", "5215500000101")
        escalate(stack, "wamid.N2", "5215500000102")
        stack.wait_until(lambda: len(hook.posts()) >= 2, timeout=60, what="two notifications")
        time.sleep(2.5)  # two ticks: nothing else may arrive
        posts = hook.posts()
        ids = escalation_ids(stack)
        check("two escalations: exactly two POSTs", len(posts) == 2, posts)
        check("two escalations: the ids of the escalations, each once",
              sorted(p["json"]["escalation_id"] for p in posts) == ids and len(ids) == 2, (posts, ids))
        check("POSTs are JSON to the configured path",
              all(p["path"] == "/hooks/T000/B000/secret" and p["content_type"] == "application/json" for p in posts),
              posts)
        by_id = {p["json"]["escalation_id"]: p["json"] for p in posts}
        senders = dict(stack.query("SELECT e.escalation_id, m.sender FROM v_escalations e JOIN v_messages m"
                                   " USING (message_id)"))
        for escalation_id, body in by_id.items():
            check(f"escalation {escalation_id}: reason, channel and the link to the case",
                  body["reason"] == "contract_failed" and body["channel"] == "whatsapp" and
                  body["url"] == f"{PUBLIC_URL}/staff/#/escalations/{escalation_id}", body)
            expected = (f"dispatchd: escalation #{escalation_id} (contract_failed) on whatsapp from "
                        f"{senders[escalation_id]}: Necesito la factura de octubre")
            check(f"escalation {escalation_id}: the text names it and quotes the first line only",
                  body["text"] == expected, (body["text"], expected))
        check("/metrics: two sent, none pending",
              metric(stack, 'dispatchd_notifications_total{result="sent"}') == 2 and
              metric(stack, "dispatchd_notifications_pending") == 0,
              (metric(stack, 'dispatchd_notifications_total{result="sent"}'),
               metric(stack, "dispatchd_notifications_pending")))
        check("/metrics: the oldest open escalation's age is there",
              metric(stack, "dispatchd_escalation_oldest_open_age_seconds") is not None)
    finally:
        stack.close()
        hook.stop()


def retry_flow():
    hook = Hook()
    hook.fail(500)
    stack = stack_for(hook.url())
    try:
        stack.start_daemon()
        escalate(stack, "wamid.R1", "5215500000201")
        stack.wait_until(lambda: any(p["status"] == 200 for p in hook.posts()), timeout=60,
                         what="the notification delivered")
        time.sleep(2.5)
        posts = hook.posts()
        ids = escalation_ids(stack)
        check("500: answered 500, then sent again and answered 200",
              [p["status"] for p in posts] == [500, 200], [p["status"] for p in posts])
        check("500: both tries are the one escalation",
              len(ids) == 1 and all(p["json"]["escalation_id"] == ids[0] for p in posts), (posts, ids))
        check("/metrics: one retried, one sent",
              metric(stack, 'dispatchd_notifications_total{result="retried"}') == 1 and
              metric(stack, 'dispatchd_notifications_total{result="sent"}') == 1)
    finally:
        stack.close()
        hook.stop()


def restart_flow():
    port = harness.free_port()  # nothing listens there yet: the receiver is down
    stack = stack_for(f"http://127.0.0.1:{port}/hooks/T000/B000/secret")
    hook = None
    try:
        stack.start_daemon()
        escalate(stack, "wamid.S1", "5215500000301")
        stack.wait_until(lambda: (metric(stack, 'dispatchd_notifications_total{result="retried"}') or 0) >= 1,
                         timeout=60, what="a failed try while the receiver is down")
        check("receiver down: the notification is pending", metric(stack, "dispatchd_notifications_pending") == 1)
        code = stack.daemon.stop(signal.SIGTERM)
        check("receiver down: SIGTERM exits 0", code == 0, code)
        hook = Hook(port)
        stack.start_daemon()
        stack.wait_until(lambda: len(hook.posts()) >= 1, timeout=30, what="the notification after the restart")
        time.sleep(2.5)
        posts = hook.posts()
        ids = escalation_ids(stack)
        check("restart: delivered exactly once", len(posts) == 1 and posts[0]["status"] == 200, posts)
        check("restart: it is the escalation that happened while the receiver was down",
              len(ids) == 1 and posts[0]["json"]["escalation_id"] == ids[0], (posts, ids))
        stack.daemon.stop(signal.SIGTERM)
        stack.start_daemon()
        time.sleep(2.5)
        check("a second restart sends nothing again", len(hook.posts()) == 1, hook.posts())
    finally:
        stack.close()
        if hook:
            hook.stop()


def history_flow():
    # Escalations from before the first start with a notify_url are not announced.
    hook = Hook()
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO)
    try:
        stack.start_daemon()
        escalate(stack, "wamid.H1", "5215500000401")
        stack.wait_until(lambda: len(escalation_ids(stack)) == 1, timeout=60, what="the old escalation")
        stack.daemon.stop(signal.SIGTERM)
        with open(stack.config_path) as f:
            config = json.load(f)
        harness.merge(config, {"escalation": {"notify_url": hook.url()}})
        with open(stack.config_path, "w") as f:
            json.dump(config, f)
        stack.start_daemon()
        escalate(stack, "wamid.H2", "5215500000402")
        stack.wait_until(lambda: len(hook.posts()) >= 1, timeout=60, what="the new escalation's notification")
        time.sleep(2.5)
        posts = hook.posts()
        ids = escalation_ids(stack)
        check("history: only the escalation after the first start with a notify_url is POSTed",
              [p["json"]["escalation_id"] for p in posts] == ids[1:], (posts, ids))
    finally:
        stack.close()
        hook.stop()


def breach_flow():
    """The daemon's own check: a case left open past a one-minute target is recorded as
    breached once (audit, v_escalations, the gauge) and announced once, by the real clock."""
    hook = Hook()
    stack = stack_for(hook.url(), {"staff": {"response_target_minutes": {"default": 1}}})
    try:
        stack.start_daemon()
        escalate(stack, "wamid.T1", "5215500000401")
        stack.wait_until(lambda: hook.posts(), timeout=60, what="the opened notification")
        ids = escalation_ids(stack)
        check("target: one escalation, announced as opened",
              len(ids) == 1 and [p["json"]["event"] for p in hook.posts()] == ["opened"], hook.posts())
        check("target: not breached before its minute",
              stack.query("SELECT breach_noticed_at FROM v_escalations")[0][0] is None)
        breached = lambda: [p for p in hook.posts() if p["json"].get("event") == "breached"]  # noqa: E731
        stack.wait_until(breached, timeout=150, what="the breached notification")
        time.sleep(6)  # more than one check (every 5 ticks): a breach is recorded once
        posts = breached()
        check("target: one breached notification, for the escalation",
              len(posts) == 1 and posts[0]["json"]["escalation_id"] == ids[0], posts)
        events = stack.query("SELECT count(*) FROM v_audit WHERE event = 'escalation_breached'")[0][0]
        check("target: the breach is one audit event", events == 1, events)
        check("target: v_escalations has when it was noticed",
              stack.query("SELECT breach_noticed_at FROM v_escalations")[0][0] is not None)
        gauge = metric(stack, 'dispatchd_escalations_breached{reason="contract_failed"}')
        check("/metrics: the open case past its target is counted", gauge == 1, gauge)
    finally:
        stack.close()
        hook.stop()


sys.exit(harness.run_flows((two_escalations_flow, retry_flow, restart_flow, history_flow, breach_flow)))
