#!/usr/bin/env python3
"""What each WhatsApp message costs, end to end (docs/channels.md, "What each message
costs"): the real dispatchd with connectors.whatsapp.prices, the fake model and the fake Graph
API. Replies are sent; status webhooks carry Meta's pricing object; v_messages shows the
category and the cost at the configured prices (a market's price for a Mexican number, the
default for a German one, 0 for a free service reply, none for a billable category without a
price); `dispatchctl cost` totals them per category, and `dispatchctl trail` shows them.

Usage: pricing_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
PRICES = {"currency": "USD",
          "default": {"marketing": 0.025, "utility": 0.004, "authentication": 0.0035, "service": 0},
          "markets": {"52": {"marketing": 0.0436}}}
# customer, the pricing object of their reply's status, the cost expected in v_messages
CASES = [
    ("5215550200001", {"billable": False, "pricing_model": "PMP", "category": "service",
                       "type": "free_customer_service"}, 0.0),
    ("5215550200002", {"billable": True, "pricing_model": "PMP", "category": "marketing", "type": "regular"}, 0.0436),
    ("4915150200003", {"billable": True, "pricing_model": "PMP", "category": "marketing", "type": "regular"}, 0.025),
    ("4915150200004", {"billable": True, "pricing_model": "PMP", "category": "utility"}, 0.004),
    ("4915150200005", {"billable": True, "pricing_model": "PMP", "category": "authentication_international"}, None),
]


def reply_of(stack, customer):
    rows = stack.query("SELECT message_id, provider_message_id FROM v_actions WHERE recipient = ? AND status = 'sent'",
                       customer)
    return rows[0] if rows else None


def main():
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO,
                          extra_config={"connectors": {"whatsapp": {"prices": PRICES}}})
    try:
        stack.start_daemon()
        for i, (customer, _, _) in enumerate(CASES):
            status, _ = stack.post_webhook(harness.text_webhook(f"wamid.PRICE{i}", customer, "Hola, ¿envían a todo México?"))
            check(f"{customer}: webhook answered 200", status == 200, status)
        for customer, pricing, cost in CASES:
            stack.wait_until(lambda: reply_of(stack, customer), what=f"the reply to {customer} sent")
            message_id, wamid = reply_of(stack, customer)
            check(f"{customer}: no pricing before its status", stack.scalar(
                "SELECT count(*) FROM v_messages WHERE message_id = ? AND send_category IS NULL", message_id) == 1)
            status, _ = stack.post_webhook(harness.status_webhook(wamid, customer, "sent", pricing=pricing))
            check(f"{customer}: status webhook answered 200", status == 200, status)
            stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE message_id = ?"
                                                  " AND send_category IS NOT NULL", message_id) == 1,
                             what=f"the pricing of the reply to {customer} recorded")
            category, billable, got, currency = stack.query(
                "SELECT send_category, send_billable, send_cost, send_currency FROM v_messages WHERE message_id = ?",
                message_id)[0]
            check(f"{customer}: v_messages shows the category billed", category == pricing["category"], category)
            check(f"{customer}: and whether it was billable", billable == int(pricing["billable"]), billable)
            check(f"{customer}: and its cost at the configured prices",
                  (got is None and cost is None) or (got is not None and cost is not None and abs(got - cost) < 1e-9),
                  (got, cost))
            check(f"{customer}: in the prices' currency", currency == "USD", currency)
        # delivered and read repeat the object: the message is counted once.
        customer, pricing, _ = CASES[1]
        _, wamid = reply_of(stack, customer)
        for status_text in ("delivered", "read"):
            stack.post_webhook(harness.status_webhook(wamid, customer, status_text, pricing=pricing))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_audit WHERE event = 'delivery'") == len(CASES) + 2,
                         what="every delivery report recorded")

        done = stack.dispatchctl("cost", "--json")
        check("dispatchctl cost --json: exit 0", done.returncode == 0, done.stderr)
        sends = {s["category"]: s for s in json.loads(done.stdout)["sends"]}
        check("cost: marketing counted once per message",
              sends.get("marketing", {}).get("sends") == 2 and sends["marketing"]["billable"] == 2, sends)
        check("cost: marketing's total is the market's price plus the default one",
              abs(sends.get("marketing", {}).get("cost", 0) - 0.0686) < 1e-9, sends)
        check("cost: a free service reply costs 0",
              sends.get("service", {}).get("cost") == 0 and sends["service"]["billable"] == 0, sends)
        check("cost: a billable category without a price is unpriced, not free",
              sends.get("authentication_international", {}).get("unpriced") == 1, sends)
        check("cost: every row in USD", all(s["currency"] == "USD" and s["channel"] == "whatsapp"
                                            for s in sends.values()), sends)
        text = stack.dispatchctl("cost").stdout
        check("dispatchctl cost: a line per category, and the total",
              "marketing" in text and "utility" in text and "0.0726" in text, text)

        trail = stack.dispatchctl("trail", "--provider-id", "wamid.PRICE1")
        check("dispatchctl trail: the reply's pricing",
              "billed as marketing (PMP, regular): 0.0436 USD" in trail.stdout, trail.stdout[-2000:])
        check("audit chain verifies", stack.audit_verify().returncode == 0)
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(harness.run_flows([main]))
