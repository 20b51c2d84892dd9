#!/usr/bin/env python3
"""The reply window end to end (docs/channels.md, "The reply window"): the real dispatchd with
the fake model (window_scenario.json, its requests dumped) and the fake Graph API.

- closed: a customer whose message arrived more than 24 hours ago and was not answered yet
  (stored while dispatchd was stopped, its arrival 25 hours back: the window counts from the
  customer's last stored message): the model's request says the window is closed; its
  free-form reply is refused by the policy and re-asked with the feedback (window_closed, the
  template actions or that none can reach them); nothing is sent to Graph; the escalation
  the model chooses on the re-ask is stored;
- open: a customer who wrote now: the request says the window is open until when, and the
  reply is sent;
- 131047: Graph refuses a send because the window closed meanwhile: a window_closed
  escalation (not send_failed) with the reply as its proposed action, never resent.

Usage: window_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "window_scenario.json")
LATE, NOW, REFUSED = "5215550200001", "5215550200002", "5215550200003"


def escalations(stack, wamid):
    return stack.query("SELECT e.reason FROM v_escalations e JOIN v_messages m ON m.message_id = e.message_id"
                       " WHERE m.provider_message_id = ?", wamid)


def windows_flow():
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO)
    dump = stack.dump_model_requests(SCENARIO)
    try:
        stack.start_daemon()  # the schema
        stack.daemon.stop()
        # Closed: the customer wrote 25 hours ago, and the message still waits for an answer.
        arrived = time.time() - 25 * 3600
        stack.execute("INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text,"
                f" raw_payload, message_type, arrived_ms) VALUES ('whatsapp', 'wamid.L1', '{LATE}', '{LATE}',"
                f" '{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(arrived))}', 'Hola, ¿me ayudan?', '{{}}', 'text',"
                f" {int(arrived * 1000)})")
        stack.start_daemon()
        stack.wait_until(lambda: escalations(stack, "wamid.L1"), what="the decision about wamid.L1")
        turns = [t for t in harness.model_turns(dump) if LATE in t]
        check("closed: the model was asked twice", len(turns) == 2, turns)
        check("closed: the request says the window is closed",
              all("The customer's reply window is closed (it closed at " in t for t in turns), turns[:1])
        check("closed: and that only template actions reach them",
              "only template actions can" in turns[0], turns[:1])
        check("closed: the re-ask carries the policy's feedback",
              "window_closed" in turns[1] and "no template action in the catalog can reach them" in turns[1],
              turns[1:])
        attempts = stack.query("SELECT a.verdict FROM v_attempts a JOIN v_messages m ON m.message_id = a.message_id"
                               " WHERE m.provider_message_id = 'wamid.L1' ORDER BY a.attempt")
        check("closed: the free-form reply was invalid, the escalation valid",
              attempts == [("invalid",), ("valid",)], attempts)
        check("closed: escalated by the model", escalations(stack, "wamid.L1") == [("model_escalated",)],
              escalations(stack, "wamid.L1"))
        check("closed: nothing was sent to Graph", not [m for m in stack.graph_messages() if m[0] == LATE],
              stack.graph_messages())

        # Open: the customer writes now.
        stack.post_webhook(harness.text_webhook("wamid.N1", NOW, "Hola"))
        stack.wait_until(lambda: any(m[0] == NOW for m in stack.graph_messages()), what="the reply to wamid.N1")
        turns = [t for t in harness.model_turns(dump) if NOW in t]
        check("open: the request says the window is open and until when",
              turns and "The customer's reply window is open until 20" in turns[0], turns[:1])
        check("the audit chain verifies", stack.audit_verify().returncode == 0)
    finally:
        stack.close()


def graph_131047_flow():
    # The window was open when decided, but Graph says it closed meanwhile.
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, graph_script="131047")
    try:
        stack.start_daemon()
        stack.post_webhook(harness.text_webhook("wamid.R1", REFUSED, "Hola"))
        stack.wait_until(lambda: escalations(stack, "wamid.R1"), what="the escalation of wamid.R1")
        check("131047: a window_closed escalation, not send_failed",
              escalations(stack, "wamid.R1") == [("window_closed",)], escalations(stack, "wamid.R1"))
        proposed = stack.scalar("SELECT proposed_action FROM v_escalations WHERE reason = 'window_closed'")
        check("131047: the reply that could not go is the proposed action",
              proposed is not None and "Claro, te ayudo con eso." in proposed, proposed)
        detail = stack.scalar("SELECT detail FROM v_escalations WHERE reason = 'window_closed'")
        check("131047: the detail names Graph's code", "131047" in detail, detail)
        time.sleep(0.5)
        check("131047: sent once, never retried", len(stack.graph_messages(answered=400)) == 1,
              stack.graph_messages(400))
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(harness.run_flows([windows_flow, graph_131047_flow]))
