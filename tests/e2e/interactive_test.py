#!/usr/bin/env python3
"""Interactive replies end to end (docs/channels.md, "Interactive replies"): the real dispatchd
with catalog/examples/interactive.en.json, the fake model scripted by interactive_scenario.json
and the fake Graph API, which refuses an interactive message whose shape is not Meta's
(tests/fakes/graph_interactive.h).

- buttons: the model answers send_buttons, and Graph receives exactly the documented
  reply-buttons payload (Meta's "Interactive reply buttons messages" request syntax);
- list: likewise for send_list (Meta's "Interactive list messages"), a row without a
  description sent without one;
- limits: 4 buttons, and (another message) a 25-character title: each is re-asked with the
  validator's exact error (JSON pointer and message), and the valid answer that follows is sent;
- a tap: a button_reply webhook reaches the model with the button's id, and its answer is sent;
- Gmail: the same buttons and list arrive as numbered lines under the text (fake_gmail.py).

Usage: interactive_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import email
import email.policy
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gmail_harness  # noqa: E402
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "interactive_scenario.json")
ANA, BEA, CARLOS, DORA = "5215550100001", "5215550100002", "5215550100003", "5215550100004"


def interactive_sent(stack, to):
    """The interactive messages Graph accepted for `to`: [(payload dict, wamid)]."""
    return [(json.loads(e["payload"]), e.get("wamid")) for e in stack.graph_requests()
            if e.get("type") == "interactive" and e.get("to") == to and e.get("answered") == 200]


def refused_interactive(stack):
    return [e for e in stack.graph_requests() if e.get("type") == "interactive" and e.get("answered") != 200]


def expect_payload(stack, to, interactive, what):
    stack.wait_until(lambda: interactive_sent(stack, to), what=f"the {what} message to {to}")
    payload, wamid = interactive_sent(stack, to)[0]
    tracker = payload.pop("biz_opaque_callback_data", "")
    documented = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to, "type": "interactive",
                  "interactive": interactive}
    check(f"{what}: Graph received exactly the documented payload", payload == documented,
          json.dumps(payload, ensure_ascii=False))
    check(f"{what}: members in the documented order", list(payload) == list(documented), list(payload))
    check(f"{what}: the idempotency key travels as the tracker", tracker.startswith("dispatchd-"), tracker)
    stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE recipient = ? AND status = 'sent'"
                                          " AND provider_message_id = ?", to, wamid) == 1,
                     what=f"the {what} row sent with its wamid")
    return wamid, tracker


def tap_webhook(wamid, sender, replied_to, button_id, title):
    """A customer's tap on a reply button, as Meta's webhook carries it (type interactive, button_reply)."""
    message = {"context": {"from": "15550001234", "id": replied_to}, "from": sender, "id": wamid,
               "timestamp": str(int(time.time())), "type": "interactive",
               "interactive": {"type": "button_reply", "button_reply": {"id": button_id, "title": title}}}
    payload = {"object": "whatsapp_business_account", "entry": [{"id": "1023456789012345", "changes": [{
        "field": "messages", "value": {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "15550001234", "phone_number_id": harness.PHONE_NUMBER_ID},
            "contacts": [{"profile": {"name": "Ana"}, "wa_id": sender}], "messages": [message]}}]}]}
    return json.dumps(payload, separators=(",", ":")).encode()


def main():
    stack = None
    try:
        stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, catalog="interactive.en.json")
        dump = stack.dump_model_requests(SCENARIO)
        stack.start_daemon()

        # Buttons.
        status, _ = stack.post_webhook(harness.text_webhook("wamid.IN1", ANA, "Hi, can you confirm my order?"))
        check("buttons: webhook answered 200", status == 200, status)
        buttons_wamid, _ = expect_payload(stack, ANA, {
            "type": "button", "body": {"text": "Order 1042: shall we ship it today?"},
            "action": {"buttons": [{"type": "reply", "reply": {"id": "confirm_order_1042", "title": "Yes, confirm"}},
                                   {"type": "reply", "reply": {"id": "cancel_order_1042", "title": "Cancel"}}]}},
            "buttons")
        # The delivery report finds the row as for a text.
        stack.post_webhook(harness.status_webhook(buttons_wamid, ANA, "delivered"))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_audit WHERE event = 'delivery'") >= 1,
                         what="the delivery report recorded")

        # A list.
        stack.post_webhook(harness.text_webhook("wamid.IN2", BEA, "Which delivery slot can I get?"))
        expect_payload(stack, BEA, {
            "type": "list", "body": {"text": "Pick a delivery slot for order 1042."},
            "action": {"button": "Delivery slots", "sections": [
                {"title": "Monday", "rows": [
                    {"id": "slot_mon_10", "title": "Monday 10:00", "description": "Morning, 10:00 to 12:00"},
                    {"id": "slot_mon_16", "title": "Monday 16:00"}]},
                {"title": "Tuesday", "rows": [
                    {"id": "slot_tue_10", "title": "Tuesday 10:00", "description": "Morning, 10:00 to 12:00"}]}]}},
            "list")

        # Limits: each answer breaking one is re-asked with the exact error, then the valid one is sent.
        for sender, wamid, text, error in (
                (CARLOS, "wamid.IN3", "I want to change my address",
                 "- /buttons (max_items): 4 buttons; at most 3 allowed"),
                (DORA, "wamid.IN5", "Tell me where to deliver",
                 "- /buttons/1/title (max_length): 25 characters; at most 20 allowed")):
            stack.post_webhook(harness.text_webhook(wamid, sender, text))
            expect_payload(stack, sender, {
                "type": "button", "body": {"text": "Which address?"},
                "action": {"buttons": [{"type": "reply", "reply": {"id": "a1", "title": "Home"}},
                                       {"type": "reply", "reply": {"id": "a2", "title": "Office"}}]}},
                f"limits ({sender})")
            turns = harness.model_turns(dump)
            check(f"limits ({sender}): re-asked with the exact error {error}", any(error in t for t in turns),
                  turns[-1:])
            check(f"limits ({sender}): two attempts for that message",
                  stack.scalar("SELECT count(*) FROM v_attempts a JOIN v_messages m ON m.message_id = a.message_id"
                               " WHERE m.provider_message_id = ?", wamid) == 2)
        check("limits: Graph never saw a payload out of shape", not refused_interactive(stack),
              refused_interactive(stack))

        # The customer taps a button: the model reads its id.
        stack.post_webhook(tap_webhook("wamid.IN4", ANA, buttons_wamid, "confirm_order_1042", "Yes, confirm"))
        stack.wait_until(lambda: any(m[0] == ANA and m[1] == "Confirmed: order 1042 ships today."
                                     for m in stack.graph_messages()), what="the answer to the tap")
        turns = harness.model_turns(dump)
        check("tap: the model read the title and the button's id",
              any("Yes, confirm [reply id: confirm_order_1042]" in t for t in turns), turns[-1:])
        check("tap: stored as an interactive message",
              stack.scalar("SELECT message_type FROM v_messages WHERE provider_message_id = 'wamid.IN4'") == "interactive")
        check("the audit chain verifies", stack.audit_verify().returncode == 0)
    finally:
        if stack:
            stack.close()
    print("interactive: all checks passed")


def gmail_flow():
    """Email has no buttons: the choices follow the text as numbered lines."""
    with gmail_harness.started(BUILD, SOURCE, scenario=SCENARIO, catalog="interactive.en.json") as (gmail, stack, _):
        for subject, text, expected in (
                ("Order 1042", "Hi, can you confirm my order?",
                 "Order 1042: shall we ship it today?\n\n1. Yes, confirm\n2. Cancel"),
                ("Delivery", "Which delivery slot can I get?",
                 "Pick a delivery slot for order 1042.\n\nMonday\n1. Monday 10:00 - Morning, 10:00 to 12:00\n"
                 "2. Monday 16:00\nTuesday\n3. Tuesday 10:00 - Morning, 10:00 to 12:00")):
            asked = gmail.deliver(gmail_harness.mail("ana@cliente.example", subject, text))
            check(f"gmail ({subject}): answered", stack.wait_outcome(asked["id"]) == "replied",
                  stack.outcome(asked["id"]))
            stack.wait_until(lambda: stack.replies_in(asked["threadId"]), what="the reply in the fake")
            reply = email.message_from_string(stack.replies_in(asked["threadId"])[0]["raw"], policy=email.policy.default)
            body = reply.get_content().replace("\r\n", "\n").strip()
            check(f"gmail ({subject}): the choices as numbered lines under the text", body == expected, body)


if __name__ == "__main__":
    main()
    gmail_flow()
    print("interactive on gmail: all checks passed")
