#!/usr/bin/env python3
"""Bursts end to end: a conversation's messages that come close together get one model call
and one reply (agent.burst_quiet_ms at its default), and kill -9 in the middle of bursts
loses and repeats nothing.

Usage: burst_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
QUIET_S = 1.5  # agent.burst_quiet_ms's default


def stack_for(**kwargs):
    # The harness turns bursts off for the other tests; these run with the default.
    return harness.Stack(BUILD, SOURCE, scenario=SCENARIO, extra_config={"agent": {"burst_quiet_ms": 1500, "burst_max_ms": 6000}}, **kwargs)


def turns_and_sends(stack):
    """Per message: (conversation, turn, outcome); per turn: its sends that left or may have."""
    messages = stack.query("SELECT provider_message_id, conversation_id, turn_id, outcome FROM v_messages")
    sends = {}
    for message_id, status in stack.query(
            "SELECT message_id, status FROM v_actions WHERE status IN ('sent', 'unknown', 'approved', 'sending')"):
        sends.setdefault(message_id, []).append(status)
    return messages, sends


def one_burst_flow():
    stack = stack_for()
    try:
        stack.start_daemon()
        sender = "5215550000001"
        texts = ["hola", "¿Tienen envío a Monterrey?", "es para un regalo"]
        started = time.monotonic()
        for i, text in enumerate(texts):
            status, _ = stack.post_webhook(harness.text_webhook(f"wamid.B{i}", sender, text))
            check(f"burst: webhook {i + 1} answered 200", status == 200, status)
            time.sleep(0.3)
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sent'") >= 1,
                         what="the reply")
        took = time.monotonic() - started
        time.sleep(QUIET_S + 0.5)  # a second reply, were there one, would have left by now
        check("burst: one model call for three messages", stack.scalar("SELECT count(*) FROM v_attempts") == 1,
              stack.query("SELECT message_id, attempt FROM v_attempts"))
        check("burst: one reply", len([m for m in stack.graph_messages() if m[0] == sender]) == 1,
              stack.graph_messages())
        rows = stack.query("SELECT turn_id, outcome FROM v_messages ORDER BY message_id")
        check("burst: the three messages are one turn, replied", len({r[0] for r in rows}) == 1 and
              {r[1] for r in rows} == {"replied"}, rows)
        check("burst: the reply came after the quiet time", took >= QUIET_S + 0.6, took)
        trail = stack.dispatchctl("trail", "--provider-id", "wamid.B2")
        check("burst: the last message's trail shows the turn and its decision",
              trail.returncode == 0 and "answered together by message" in trail.stdout,
              trail.stdout[-1500:] + trail.stderr)
    finally:
        stack.close()


def kill_flow():
    """2,000 messages in bursts of 1-4 from 800 conversations, posted by six threads with
    300 ms between a conversation's messages, while the daemon is killed with SIGKILL 20
    times and started again at once. A webhook refused or cut by a kill is posted again (as
    Meta does) until answered 200."""
    rng = random.Random(37)
    conversations = []
    total = 0
    while total < 2000:
        size = min(rng.randint(1, 4), 2000 - total)
        conversations.append(size)
        total += size
    stack = stack_for(model_latency_ms=50, quiet_graph=False)
    lock = threading.Lock()
    queue = list(range(len(conversations)))
    posted = {}  # conversation -> (first post's time, last post's time, posts retried)
    kills = []
    stop = threading.Event()

    def post(body):
        retried = False
        while True:
            try:
                status, _ = stack.post_webhook(body)
                if status == 200:
                    return retried
            except Exception:  # refused or cut by a kill
                pass
            retried = True
            time.sleep(0.1)

    def poster():
        while True:
            with lock:
                if not queue:
                    return
                c = queue.pop(0)
            sender = f"5215560{c:06d}"
            first = time.monotonic()
            retried = False
            for i in range(conversations[c]):
                if i:
                    time.sleep(0.3)
                retried |= post(harness.text_webhook(f"wamid.K{c}.{i}", sender, f"¿Tienen envío a Monterrey? {i}"))
            posted[c] = (first, time.monotonic(), retried)

    def killer():
        while not stop.is_set() and len(kills) < 20:
            time.sleep(rng.uniform(1.0, 3.0))
            if stop.is_set():
                return
            kills.append(time.monotonic())
            stack.daemon.proc.kill()
            stack.daemon.proc.wait()
            stack.start_daemon()

    try:
        stack.start_daemon()
        threads = [threading.Thread(target=poster) for _ in range(6)]
        for t in threads:
            t.start()
        killing = threading.Thread(target=killer)
        killing.start()
        for t in threads:
            t.join()
        stop.set()
        killing.join()
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE outcome = 'pending'") == 0,
                         timeout=180, what="every message decided")
        stack.wait_until(lambda: stack.scalar(
            "SELECT count(*) FROM v_actions WHERE status IN ('approved', 'sending')") == 0, timeout=60,
            what="the outbox drained")
        messages, sends = turns_and_sends(stack)
        check("kill: kills happened", len(kills) >= 15, len(kills))
        check("kill: every message stored once", len(messages) == 2000, len(messages))
        check("kill: every message has an outcome", all(m[3] in ("replied", "escalated") for m in messages),
              [m for m in messages if m[3] not in ("replied", "escalated")][:10])
        turns = {}
        for provider_id, conversation, turn, _ in messages:
            turns.setdefault(turn, set()).add(conversation)
        check("kill: no turn spans two conversations", all(len(c) == 1 for c in turns.values()))
        check("kill: every turn got one reply (sent, or in doubt and escalated), never two",
              all(len(sends.get(turn, [])) == 1 for turn in turns),
              {t: sends.get(t) for t in turns if len(sends.get(t, [])) != 1})
        unknown = stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'unknown'")
        check("kill: each send in doubt is escalated delivery_unknown", unknown == stack.scalar(
            "SELECT count(*) FROM v_escalations WHERE reason = 'delivery_unknown'"), unknown)
        # A burst is answered once unless a kill fell inside it (a message refused meanwhile
        # may come after the others' quiet time): those not touched are one turn each. The
        # rule is about arrivals as dispatchd stamped them (inbox.arrived_ms): on a loaded
        # machine a message posted 300 ms after the last one may still be stamped past the
        # quiet time, and is then rightly a turn of its own; such a conversation is left out.
        turns_of = {}
        for provider_id, conversation, turn, _ in messages:
            turns_of.setdefault(conversation, set()).add(turn)
        arrivals = {}
        for conversation, arrived_ms in stack.query("SELECT conversation_id, arrived_ms FROM inbox"):
            arrivals.setdefault(conversation, []).append(int(arrived_ms))
        stamped_apart = {c for c, times in arrivals.items()
                         if any(b - a >= QUIET_S * 1000 for a, b in zip(sorted(times), sorted(times)[1:]))}
        untouched = [c for c, (first, last, retried) in posted.items()
                     if not retried and not any(first - 1 <= k <= last + QUIET_S + 1 for k in kills)
                     and f"5215560{c:06d}" not in stamped_apart]
        split = [c for c in untouched if len(turns_of[f"5215560{c:06d}"]) != 1]
        check("kill: every burst no kill touched answered by one turn", not split and len(untouched) > 100,
              (len(untouched), split[:10]))
        bursts = sum(1 for size in conversations if size > 1)
        print(f"kill: {len(conversations)} conversations ({bursts} bursts), {len(turns)} turns, "
              f"{len(untouched)} untouched by the {len(kills)} kills, {len(stamped_apart)} stamped apart, "
              f"{unknown} sends in doubt", flush=True)
        verify = stack.audit_verify()
        check("kill: the audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)
    finally:
        stop.set()
        stack.close()


sys.exit(harness.run_flows((one_burst_flow, kill_flow)))
