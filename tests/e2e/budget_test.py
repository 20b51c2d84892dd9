#!/usr/bin/env python3
"""The model's spend budget end to end (llm.budget; docs/agent.md, "The spend budget"): with
llm.prices every attempt of the fake model has a cost; once the day's spend reaches
llm.budget.daily_usd no message is sent to the model, /readyz, /metrics, the log and the
staff API say so, and all of it holds across a restart (the counters are in the database).
A conversation past llm.budget.conversation_daily_usd escalates budget_exhausted while the
others are answered.

The next UTC day cannot be waited for here. What is shown instead: the budget reads the
counters of today only, so once today's counter rows are moved to yesterday (what the
trigger would have written had the attempts been made a day earlier) the running daemon
logs that the budget is open, /readyz drops its note and a new message is answered at once.
That the turns that waited are taken again at 00:00 UTC is shown with the agent's injected
clock (tests/agent/spend_budget_test.cpp).

Usage: budget_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
# The fake model reports 11 input and 7 output tokens a call: at 50,000 USD per million
# input tokens (output free) each attempt costs 0.55 USD.
PRICES = {"fake-model": {"input": 50000, "output": 0}}
CALL_USD = 0.55


def stack_with(budget):
    return harness.Stack(BUILD, SOURCE, scenario=SCENARIO, extra_config={"llm": {"prices": PRICES, "budget": budget}})


def ask(stack, n, sender):
    status, _ = stack.post_webhook(harness.text_webhook(f"wamid.S{n}", sender, "hola, ¿tienen envío a Monterrey?"))
    check(f"webhook {n} answered 200", status == 200, status)


def replied(stack, sender):
    return any(m[0] == sender for m in stack.graph_messages())


def budget_lines(daemon):
    return [line for line in daemon.lines if "budget: " in line]


def next_midnight():
    today = datetime.datetime.now(datetime.timezone.utc).date()
    return (today + datetime.timedelta(days=1)).strftime("%Y-%m-%dT00:00:00Z")


def daily_flow():
    stack = stack_with({"daily_usd": 1.0})
    try:
        daemon = stack.start_daemon()
        token = stack.add_staff("ana")
        daemon.wait_for_line("budget: daily budget open")
        status, body = stack.get("/readyz")
        check("daily: /readyz is plain ready while the budget is open", (status, body) == (200, "ready\n"), body)

        for n, sender in ((1, "5215550000001"), (2, "5215550000002")):
            ask(stack, n, sender)
            stack.wait_until(lambda s=sender: replied(stack, s), what=f"the reply to message {n}")
        # 1.10 USD spent: past 1.00. The next message is not sent to the model.
        ask(stack, 3, "5215550000003")
        line = daemon.wait_for_line("daily budget spent")
        check("daily: one log line says the budget is spent",
              "daily budget spent: 1.1000 of 1.0000 USD today; model calls wait until " + next_midnight() in line, line)
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE provider_message_id = 'wamid.S3'"
                                              " AND state = 'processing'") == 1, what="message 3 waiting")
        time.sleep(1.5)
        check("daily: two model calls, none for the third message",
              stack.scalar("SELECT count(*) FROM v_attempts") == 2, stack.query("SELECT message_id FROM v_attempts"))
        check("daily: the third message got no reply", not replied(stack, "5215550000003"), stack.graph_messages())
        check("daily: one budget line in the log for one change", len(budget_lines(daemon)) == 2, budget_lines(daemon))

        status, body = stack.get("/readyz")
        check("daily: /readyz stays 200 and names the spent budget",
              status == 200 and body == "ready; daily budget spent: 1.1000 of 1.0000 USD today; model calls wait "
              f"until {next_midnight()}\n", (status, body))
        status, metrics = stack.get("/metrics")
        for sample in ("dispatchd_budget_daily_limit_usd 1.000000000", "dispatchd_budget_daily_spent_usd 1.100000000",
                       "dispatchd_budget_daily_unpriced_attempts 0", "dispatchd_budget_daily_closed 1"):
            check(f"daily: /metrics has {sample}", f"\n{sample}\n" in metrics, metrics[-1500:])
        status, body = stack.get("/api/budget", {"Authorization": f"Bearer {token}"})
        budget = json.loads(body) if status == 200 else {}
        check("daily: the staff API says spent, until the next UTC midnight",
              budget.get("state") == "spent" and budget.get("daily_usd") == 1.0 and
              budget.get("until") == next_midnight() and abs(budget.get("spent_usd", 0) - 2 * CALL_USD) < 1e-9,
              (status, body))

        # A restart: the counters are in the database.
        daemon.stop()
        daemon = stack.start_daemon()
        daemon.wait_for_line("budget: daily budget spent")
        ask(stack, 4, "5215550000004")
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE provider_message_id = 'wamid.S4'"
                                              " AND state = 'processing'") == 1, what="message 4 waiting")
        time.sleep(1.5)
        check("restart: still no model call after a restart", stack.scalar("SELECT count(*) FROM v_attempts") == 2,
              stack.query("SELECT message_id FROM v_attempts"))
        status, body = stack.get("/readyz")
        check("restart: /readyz still names the spent budget", status == 200 and "daily budget spent" in body, body)

        # Today's spend becomes yesterday's, as if a day had passed.
        yesterday = (datetime.datetime.now(datetime.timezone.utc).date() - datetime.timedelta(days=1)).isoformat()
        stack.execute(f"UPDATE spend_days SET day = '{yesterday}'")
        line = daemon.wait_for_line("budget: daily budget open")
        check("next day: one log line says the budget is open again",
              "daily budget open: 0.0000 of 1.0000 USD today" in line, line)
        status, body = stack.get("/readyz")
        check("next day: /readyz is plain ready again", (status, body) == (200, "ready\n"), body)
        ask(stack, 5, "5215550000005")
        stack.wait_until(lambda: replied(stack, "5215550000005"), what="the reply to message 5")
        check("next day: a new message is answered at once", stack.scalar("SELECT count(*) FROM v_attempts") == 3)
        check("next day: the waiting ones wait for 00:00 UTC, still unanswered",
              not replied(stack, "5215550000003") and not replied(stack, "5215550000004"), stack.graph_messages())
    finally:
        stack.close()


def conversation_flow():
    stack = stack_with({"conversation_daily_usd": 0.5, "when_spent": "escalate"})
    try:
        daemon = stack.start_daemon()
        ask(stack, 1, "5215550000011")
        stack.wait_until(lambda: replied(stack, "5215550000011"), what="the first reply")
        ask(stack, 2, "5215550000011")  # the same conversation: 0.55 USD spent, past 0.50
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_escalations WHERE reason = 'budget_exhausted'")
                         == 1, what="the budget_exhausted escalation")
        why = stack.scalar("SELECT " + stack.json_text("e.detail", "why") + " FROM v_escalations e JOIN v_messages m"
                           " ON m.message_id = e.message_id WHERE m.provider_message_id = 'wamid.S2'")
        check("conversation: the escalation says which budget and until when",
              why == "conversation's daily budget spent: 0.5500 of 0.5000 USD today; turns escalate until " +
              next_midnight(), why)
        ask(stack, 3, "5215550000012")
        stack.wait_until(lambda: replied(stack, "5215550000012"), what="another conversation's reply")
        check("conversation: one model call per answered message, none for the escalated one",
              stack.scalar("SELECT count(*) FROM v_attempts") == 2)
        status, body = stack.get("/readyz")
        check("conversation: /readyz has no note for a conversation's budget", (status, body) == (200, "ready\n"),
              body)
        check("conversation: no daily-budget log line without a daily budget", budget_lines(daemon) == [],
              budget_lines(daemon))
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(harness.run_flows([daily_flow, conversation_flow]))
