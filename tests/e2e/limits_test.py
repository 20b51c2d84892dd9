#!/usr/bin/env python3
"""Runaway conversations end to end (agent.limits at their defaults): another company's bot
answering each of our replies is held after a few replies with one escalation; a person
writing normally is never held; a flood from one number costs at most the reply limit in
model calls; a hold survives a restart.

Usage: limits_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
BOT_TEXT = "Thank you for your message, an agent will reply soon"


def stack_for():
    return harness.Stack(BUILD, SOURCE, scenario=SCENARIO, limits=True)


def replies_to(stack, number):
    return [m for m in stack.graph_messages() if m[0] == number]


def bot_flow():
    stack = stack_for()
    bot = "5215580000001"
    stop = threading.Event()
    answered = []

    def auto_responder():
        """Answers every message we send it within 0.2 s, the same text each time."""
        seen = 0
        n = 0
        while not stop.is_set():
            got = len(replies_to(stack, bot))
            while seen < got:
                seen += 1
                time.sleep(0.1)
                n += 1
                status, _ = stack.post_webhook(harness.text_webhook(f"wamid.bot{n}", bot, BOT_TEXT))
                answered.append(status)
            time.sleep(0.02)

    try:
        stack.start_daemon()
        responder = threading.Thread(target=auto_responder)
        responder.start()
        stack.post_webhook(harness.text_webhook("wamid.bot0", bot, BOT_TEXT))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_escalations") >= 1, timeout=60,
                         what="the loop's escalation")
        time.sleep(3)  # a bot answered within 0.2 s: whatever would follow has come by now
        stop.set()
        responder.join()
        sent = len(replies_to(stack, bot))
        check("bot: at most 10 replies", 1 <= sent <= 10, sent)
        reasons = [r[0] for r in stack.query("SELECT reason FROM v_escalations")]
        check("bot: one escalation, suspected_loop", reasons == ["suspected_loop"], reasons)
        detail = stack.scalar("SELECT detail FROM v_escalations")
        check("bot: staff see why", "times in a row" in detail or "ms of each" in detail, detail)
        check("bot: no holding reply or other send after it", len(replies_to(stack, bot)) == sent)
        held = stack.scalar("SELECT count(*) FROM conversation_holds")
        check("bot: the conversation is held", held == 1, held)
        calls = stack.scalar("SELECT count(*) FROM v_attempts")
        check("bot: a model call per reply, none after", calls == sent, (calls, sent))

        # A restart keeps the hold: the next message is stored and done without the model.
        stack.daemon.stop()
        stack.start_daemon()
        status, _ = stack.post_webhook(harness.text_webhook("wamid.after", bot, "hola otra vez"))
        stack.wait_until(lambda: stack.scalar(
            "SELECT count(*) FROM v_messages WHERE provider_message_id = 'wamid.after' AND state = 'done'") == 1,
            what="the held message done")
        check("restart: the hold holds", stack.scalar("SELECT count(*) FROM v_attempts") == calls and
              stack.scalar("SELECT outcome FROM v_messages WHERE provider_message_id = 'wamid.after'") == "ignored")
        check("restart: nothing sent", len(replies_to(stack, bot)) == sent)
        verify = stack.audit_verify()
        check("bot: the audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)
    finally:
        stop.set()
        stack.close()


def human_flow():
    stack = stack_for()
    person = "5215580000002"
    texts = ["hola", "¿Tienen envío a Monterrey?", "¿y a Guadalajara?", "¿cuánto tarda?", "¿aceptan tarjeta?",
             "perfecto, gracias"]
    try:
        stack.start_daemon()
        for i, text in enumerate(texts):
            stack.post_webhook(harness.text_webhook(f"wamid.h{i}", person, text))
            stack.wait_until(lambda: len(replies_to(stack, person)) >= i + 1, what=f"reply {i + 1}")
            time.sleep(3)  # reading, then typing
        check("person: every message answered", len(replies_to(stack, person)) == len(texts))
        check("person: never escalated nor held", stack.scalar("SELECT count(*) FROM v_escalations") == 0 and
              stack.scalar("SELECT count(*) FROM conversation_holds") == 0)
    finally:
        stack.close()


def flood_flow():
    stack = stack_for()
    flooder = "5215580000003"
    try:
        stack.start_daemon()
        statuses = [stack.post_webhook(harness.text_webhook(f"wamid.f{i}", flooder, f"pregunta número {i}"))[0]
                    for i in range(1000)]
        check("flood: every webhook answered 200", set(statuses) == {200})
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE outcome = 'pending'") == 0,
                         timeout=120, what="every message done")
        calls = stack.scalar("SELECT count(*) FROM v_attempts")
        check("flood: at most the reply limit (10) in model calls", 1 <= calls <= 10, calls)
        reasons = [r[0] for r in stack.query("SELECT reason FROM v_escalations")]
        check("flood: one escalation that holds it", len(reasons) == 1 and
              reasons[0] in ("suspected_loop", "conversation_limit"), reasons)
        outcomes = dict(stack.query("SELECT outcome, count(*) FROM v_messages GROUP BY 1"))
        check("flood: every message stored and done", sum(outcomes.values()) == 1000, outcomes)
        sent = len(replies_to(stack, flooder))
        check("flood: at most 10 replies", sent <= 10, sent)
    finally:
        stack.close()


sys.exit(harness.run_flows((bot_flow, human_flow, flood_flow)))
